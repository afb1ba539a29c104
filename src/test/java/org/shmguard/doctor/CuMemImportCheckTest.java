package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.MIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CuMemImportCheckTest {
  @TempDir Path root;

  private HostFixture twoContainersOneGpuEach(String driver, int secondGpu) {
    HostFixture host = new HostFixture(root).gpus(2, driver)
        .containerDevices(3001, List.of(0), List.of(0))
        .containerDevices(3002, List.of(secondGpu), List.of(0));
    host.containerShm(90, 3001, "pod:1b4e28ba-2fa1-11d2-883f-0016d3cca427", 1024 * MIB, 0);
    host.containerShm(91, 3002, "pod:2c5f39cb-3fb2-22e3-994a-1127e4ddb538", 1024 * MIB, 0);
    return host;
  }

  @Test
  void twoContainersWithOneGpuEachOnThe570DriverWarn() {
    Finding f = only(new CuMemImportCheck().run(twoContainersOneGpuEach("570.124.06", 1).context()), "cumem-import-ordinal");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("2 containers here each see one GPU").contains("driver 570.124.06")
        .contains("invalid device ordinal");
    assertThat(f.evidence().get(0)).contains("Kernel Module  570.124.06");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("/dev/nvidia1, IMEX channel(s) [0]"));
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).startsWith("not known here"));
    assertThat(f.fix().get(0)).contains("past the 570 branch");
  }

  @Test
  void theSameLayoutOnAnotherDriverIsOnlyANote() {
    Finding f = only(new CuMemImportCheck().run(twoContainersOneGpuEach("580.65.06", 1).context()), "cumem-import-ordinal");

    assertThat(f.severity()).isEqualTo(Severity.INFO);
    assertThat(f.summary()).contains("this host runs driver 580.65.06");
  }

  @Test
  void containersSharingOneGpuAreNotThatLayout() {
    assertThat(new CuMemImportCheck().run(twoContainersOneGpuEach("570.124.06", 0).context())).isEmpty();
  }

  @Test
  void openKernelModuleVersionLineIsParsed() {
    assertThat(GpuHost.parseVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 22:50:36 UTC 2025"))
        .isEqualTo("570.86.15");
    assertThat(GpuHost.parseVersion("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024"))
        .isEqualTo("550.54.15");
  }

  @Test
  void hostWithoutDriverHasNoGpusAndNoVersion() {
    GpuHost none = GpuHost.read(new HostFixture(root).paths());

    assertThat(none.hasGpu()).isFalse();
    assertThat(none.driverVersion()).isNull();
    assertThat(none.driverBranch()).isEqualTo(-1);
  }
}
