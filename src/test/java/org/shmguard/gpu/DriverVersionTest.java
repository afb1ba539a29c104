package org.shmguard.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DriverVersionTest {
  @Test
  void readsTheVersionFromProcDriverNvidiaVersion() {
    String text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 UTC 2024\n"
        + "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";

    DriverVersion d = DriverVersion.fromProcText(text);

    assertThat(d).isEqualTo(new DriverVersion(560, 35, 3));
    assertThat(d.toString()).isEqualTo("560.35.03");
    assertThat(d.cuda()).isEqualTo(CudaVersion.of(12, 6));
  }

  @Test
  void readsTheOpenKernelModuleLine() {
    String text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16)\n";

    assertThat(DriverVersion.fromProcText(text)).isEqualTo(new DriverVersion(570, 86, 15));
  }

  @Test
  void mapsDriverBranchesToTheCudaTheyServe() {
    assertThat(DriverVersion.parse("535.183.01").cuda()).isEqualTo(CudaVersion.of(12, 2));
    assertThat(DriverVersion.parse("580.65.06").cuda()).isEqualTo(CudaVersion.of(13, 0));
    assertThat(DriverVersion.parse("390.157").cuda()).isNull();
  }

  @Test
  void textWithoutAVersionGivesNullAndBadTextAClearError() {
    assertThat(DriverVersion.fromProcText("nothing here")).isNull();
    assertThatThrownBy(() -> DriverVersion.parse("abc")).hasMessageContaining("such as 560.35.03");
  }
}
