package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.MIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.nativ.Nvml;

class NvlsHeadroomCheckTest {
  @TempDir Path root;

  private static List<Nvml.Gpu> eightH100(long freeOnGpu3) {
    List<Nvml.Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long free = i == 3 ? freeOnGpu3 : 20 * GIB;
      gpus.add(new Nvml.Gpu(i, "NVIDIA H100 80GB HBM3", 80 * GIB, free, 80 * GIB - free, 9, 0));
    }
    return gpus;
  }

  @Test
  void hopperGpuWithLessThanNvlsNeedsIsNamed() {
    List<Finding> found = NvlsHeadroomCheck.assess(eightH100(900 * MIB));

    Finding f = only(found, "nvls-headroom");
    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.subject()).isEqualTo("GPU 3");
    assertThat(f.summary()).contains("GPU 3 has less than 1.5G");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("GPU 3 NVIDIA H100 80GB HBM3 (compute 9.0): 900M free of 80.0G"));
    assertThat(f.fix().get(0)).startsWith("NCCL_NVLS_ENABLE=0");
  }

  @Test
  void enoughHeadroomOnEveryGpuIsClean() {
    assertThat(NvlsHeadroomCheck.assess(eightH100(2 * GIB))).isEmpty();
  }

  @Test
  void gpusWithoutNvlsSupportAreNotFlagged() {
    List<Nvml.Gpu> ada = List.of(new Nvml.Gpu(0, "NVIDIA GeForce RTX 4090", 24 * GIB, 100 * MIB, 0, 8, 9),
        new Nvml.Gpu(1, "NVIDIA GeForce RTX 4090", 24 * GIB, 100 * MIB, 0, 8, 9));

    assertThat(NvlsHeadroomCheck.assess(ada)).isEmpty();
  }

  @Test
  void singleGpuHasNoNvls() {
    assertThat(NvlsHeadroomCheck.assess(eightH100(100 * MIB).subList(3, 4))).isEmpty();
  }

  @Test
  void withoutTheDriverNvmlIsReallyAbsentAndTheCheckIsSkippedWithANote() {
    boolean driverHere = Stream.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu", "/usr/lib")
        .anyMatch(d -> Files.exists(Path.of(d, "libnvidia-ml.so.1")));
    assumeThat(driverHere).as("this machine has an NVIDIA driver; the absent path cannot be tested here").isFalse();

    Nvml.Reading real = GpuMemoryReader.nvml().read();
    HostFixture host = new HostFixture(root).gpuMemory(real);
    Finding f = only(new NvlsHeadroomCheck().run(host.context()), "nvls-not-checked");

    assertThat(real.gpus()).isEmpty();
    assertThat(real.error()).contains("libnvidia-ml.so.1 cannot be loaded").contains("cannot open shared object file");
    assertThat(f.severity()).isEqualTo(Severity.INFO);
  }
}
