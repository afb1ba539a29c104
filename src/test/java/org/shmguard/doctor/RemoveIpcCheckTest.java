package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.ShmMount;

class RemoveIpcCheckTest {
  @TempDir Path root;

  private HostFixture systemdHostWithJobOf(int uid) {
    HostFixture host = new HostFixture(root).dir("/run/systemd/system");
    ShmMount shm = host.hostShm(32 * GIB, 0);
    host.process(4100, "python3", uid, uid == 0 ? "root" : "alice", null);
    host.holds(4100, host.segment(shm, "nccl-AbCdEf", 9_637_892, uid, Duration.ofSeconds(5)));
    return host;
  }

  @Test
  void unsetRemoveIpcIsTheUpstreamYesAndWarnsForOrdinaryUsers() {
    HostFixture host = systemdHostWithJobOf(1001)
        .file("/etc/systemd/logind.conf", "[Login]\n#RemoveIPC=yes\nKillUserProcesses=no\n");

    Finding f = only(new RemoveIpcCheck().run(host.context()), "logind-removeipc");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("alice (uid 1001)").contains("Error while attaching to shared memory segment");
    assertThat(f.evidence().get(0)).isEqualTo("RemoveIPC is not set in /etc/systemd/logind.conf: the upstream default is yes");
    assertThat(f.fix().get(0)).contains("RemoveIPC=no").contains("/etc/systemd/logind.conf.d/50-shmguard.conf");
  }

  @Test
  void dropInSettingNoSilencesIt() {
    HostFixture host = systemdHostWithJobOf(1001)
        .file("/etc/systemd/logind.conf", "[Login]\nRemoveIPC=yes\n")
        .file("/etc/systemd/logind.conf.d/90-nccl.conf", "[Login]\nRemoveIPC=no\n");

    assertThat(new RemoveIpcCheck().run(host.context())).isEmpty();
  }

  @Test
  void etcDropInHidesTheSameNameUnderUsrLibAndLaterNamesWin() {
    HostFixture host = new HostFixture(root)
        .file("/usr/lib/systemd/logind.conf.d/10-vendor.conf", "[Login]\nRemoveIPC=no\n")
        .file("/etc/systemd/logind.conf.d/10-vendor.conf", "[Login]\nRemoveIPC=yes\n")
        .file("/usr/lib/systemd/logind.conf.d/20-other.conf", "[Other]\nRemoveIPC=no\n");

    LogindConfig.Setting s = LogindConfig.removeIpc(host.paths());

    assertThat(s.value()).isTrue();
    assertThat(s.source()).isEqualTo("/etc/systemd/logind.conf.d/10-vendor.conf:2");
  }

  @Test
  void emptyAssignmentResetsAndABadBooleanIsReported() {
    HostFixture host = new HostFixture(root)
        .file("/etc/systemd/logind.conf", "[Login]\nRemoveIPC=no\nRemoveIPC=\n")
        .file("/etc/systemd/logind.conf.d/x.conf", "[Login]\nRemoveIPC=maybe\n");

    LogindConfig.Setting s = LogindConfig.removeIpc(host.paths());

    assertThat(s.value()).isNull();
    assertThat(s.problems()).singleElement().asString().contains("RemoveIPC=maybe is not a boolean");
  }

  @Test
  void systemUsersAreSparedSoItIsOnlyANote() {
    HostFixture host = systemdHostWithJobOf(0);

    Finding f = only(new RemoveIpcCheck().run(host.context()), "logind-removeipc");

    assertThat(f.severity()).isEqualTo(Severity.INFO);
  }

  @Test
  void lingeringJobUsersAreSpared() {
    HostFixture host = systemdHostWithJobOf(1001).file("/var/lib/systemd/linger/alice", "");

    Finding f = only(new RemoveIpcCheck().run(host.context()), "logind-removeipc");

    assertThat(f.severity()).isEqualTo(Severity.INFO);
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).startsWith("lingering"));
  }

  @Test
  void redHatBuildsDefaultToNo() {
    HostFixture host = systemdHostWithJobOf(1001).file("/etc/os-release", "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n");

    assertThat(new RemoveIpcCheck().run(host.context())).isEmpty();
  }

  @Test
  void hostWithoutSystemdSaysItDoesNotApply() {
    HostFixture host = new HostFixture(root);
    host.hostShm(GIB, 0);

    List<Finding> found = new RemoveIpcCheck().run(host.context());

    assertThat(only(found, "logind-not-found").severity()).isEqualTo(Severity.INFO);
  }

  @Test
  void tmpfilesRuleThatAgesDevShmIsASweepOfLiveSegments() {
    HostFixture host = new HostFixture(root)
        .file("/usr/lib/tmpfiles.d/shm.conf", "# vendor\nd /dev/shm 1777 root root -\n")
        .file("/etc/tmpfiles.d/cleanup.conf", "e /dev/shm - - - 1d\nx /dev/shm/keep-*\nd /var/tmp 1777 root root 30d\n");

    Finding f = only(new TmpfilesSweepCheck().run(host.context()), "tmpfiles-shm-sweep");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.evidence()).containsExactly("/etc/tmpfiles.d/cleanup.conf:1: e /dev/shm - - - 1d");
    assertThat(f.fix().get(0)).contains("x /dev/shm/nccl-*");
  }

  @Test
  void tmpfilesRuleWithoutAnAgeIsNotASweep() {
    HostFixture host = new HostFixture(root).file("/usr/lib/tmpfiles.d/shm.conf", "d /dev/shm 1777 root root -\n");

    assertThat(new TmpfilesSweepCheck().run(host.context())).isEmpty();
  }
}
