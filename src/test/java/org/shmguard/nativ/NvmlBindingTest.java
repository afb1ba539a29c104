package org.shmguard.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * shmguard's NVML binding against a stand-in library built from src/test/resources/nvml/fake-nvml.c
 * with the C compiler (.ci/run installs gcc): the same entry points and structure layout as NVIDIA's
 * libnvidia-ml.so.1, with fixed numbers. The real library needs a GPU, which the test machines lack.
 */
class NvmlBindingTest {
  private static final long GIB = 1L << 30;

  @TempDir Path dir;

  private Path build(String... defines) throws Exception {
    Path src = dir.resolve("fake-nvml.c");
    try (InputStream in = NvmlBindingTest.class.getResourceAsStream("/nvml/fake-nvml.c")) {
      Files.copy(in, src);
    }
    Path lib = dir.resolve("libfake-nvml-" + defines.length + ".so");
    List<String> cmd = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-nostdlib", "-o", lib.toString()));
    cmd.addAll(List.of(defines));
    cmd.add(src.toString());
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      assumeThat(false).as("needs a C compiler (cc) to build the stand-in NVML: " + e.getMessage()).isTrue();
      throw e;
    }
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return lib;
  }

  @Test
  void readsEveryGpusMemoryNameAndComputeCapability() throws Exception {
    Nvml.Reading r = Nvml.read(build().toString());

    assertThat(r.error()).isNull();
    assertThat(r.gpus()).containsExactly(
        new Nvml.Gpu(0, "NVIDIA H100 80GB HBM3", 80 * GIB, 40 * GIB, 40 * GIB, 9, 0),
        new Nvml.Gpu(1, "NVIDIA H100 80GB HBM3", 80 * GIB, 900L << 20, 80 * GIB - (900L << 20), 9, 0));
  }

  @Test
  void failingInitIsReportedWithNvmlsOwnWords() throws Exception {
    Nvml.Reading r = Nvml.read(build("-DFAKE_NVML_INIT_FAILS").toString());

    assertThat(r.gpus()).isEmpty();
    assertThat(r.error()).isEqualTo("nvmlInit_v2 failed: Driver Not Loaded (9)");
  }

  @Test
  void missingLibraryIsAnErrorNotAThrow() {
    Nvml.Reading r = Nvml.read(dir.resolve("libnvidia-ml-absent.so.1").toString());

    assertThat(r.gpus()).isEmpty();
    assertThat(r.error()).contains("cannot be loaded").contains("libnvidia-ml-absent.so.1");
  }
}
