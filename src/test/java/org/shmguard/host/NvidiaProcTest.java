package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.gpu.DriverVersion;

/** /proc/driver/nvidia read from a fixture root, as HostPaths lets the daemon read a host's /proc. */
class NvidiaProcTest {
  @Test
  void readsTheDriverAndCountsTheGpus(@TempDir Path root) throws Exception {
    Path nv = Files.createDirectories(root.resolve("proc/driver/nvidia"));
    Files.writeString(nv.resolve("version"),
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Thu Jan 23 2025\nGCC version:  gcc version 12.2.0\n");
    Files.createDirectories(nv.resolve("gpus/0000:01:00.0"));
    Files.createDirectories(nv.resolve("gpus/0000:41:00.0"));
    Files.createDirectories(nv.resolve("gpus/0000:81:00.0"));
    Files.createDirectories(nv.resolve("gpus/0000:c1:00.0"));

    HostGpus g = NvidiaProc.read(HostPaths.of(root.toString()));

    assertThat(g.driver()).isEqualTo(DriverVersion.parse("570.86.15"));
    assertThat(g.gpuCount()).isEqualTo(4);
  }

  @Test
  void aHostWithoutTheDriverIsUnknown(@TempDir Path root) {
    assertThat(NvidiaProc.read(HostPaths.of(root.toString()))).isEqualTo(HostGpus.unknown());
  }
}
