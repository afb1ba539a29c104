package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.MIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.ShmMount;

class DoctorTest {
  @TempDir Path root;

  @Test
  void healthyHostHasNoProblem() {
    HostFixture host = new HostFixture(root).gpus(8, "580.65.06").dir("/run/systemd/system")
        .file("/etc/systemd/logind.conf.d/50-shmguard.conf", "[Login]\nRemoveIPC=no\n");
    host.hostShm(64 * GIB, 0);

    DoctorReport report = Doctor.standard().examine(host.context());

    assertThat(report.problem()).as(report.findings().toString()).isFalse();
    assertThat(report.checks()).extracting(DoctorReport.CheckRun::name).containsExactly("shm-size", "leaks", "hidden-usage",
        "logind", "tmpfiles", "nvls-headroom", "cumem-import", "daemon", "oci-hook", "visibility");
  }

  @Test
  void aCheckThatThrowsIsReportedAndTheOthersStillRun() {
    HostFixture host = new HostFixture(root);
    host.hostShm(64 * MIB, 0);
    Check broken = new Check() {
      @Override
      public String name() {
        return "broken";
      }

      @Override
      public List<Finding> run(DoctorContext context) {
        throw new IllegalStateException("boom");
      }
    };

    DoctorReport report = new Doctor(List.of(broken, new ShmSizeCheck())).examine(host.context());

    assertThat(only(report.findings(), "check-failed").summary()).contains("broken").contains("boom");
    assertThat(report.findings()).anyMatch(f -> f.id().equals("shm-too-small"));
    assertThat(report.checks().get(0).outcome()).isEqualTo("failed");
  }

  @Test
  void findingsAreOrderedBySeverity() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06");
    ShmMount shm = host.hostShm(64 * MIB, 0);
    host.segment(shm, "nccl-Old001", 9_637_892, 0, Duration.ofHours(1));

    DoctorReport report = Doctor.standard().examine(host.context());

    assertThat(report.findings()).extracting(Finding::severity).isSortedAccordingTo(Enum::compareTo);
    assertThat(report.findings().get(0).id()).isEqualTo("shm-too-small");
    assertThat(report.problem()).isTrue();
  }
}
