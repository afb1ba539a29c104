package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.only;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon probe against real Unix sockets under a fixture root. */
class DaemonCheckTest {
  @TempDir Path root;

  private DoctorContext withProbeOf(HostFixture host) {
    return host.daemon(DaemonProbe.at(host.paths(), Path.of("/run/shmguard/advice.sock")).probe()).context();
  }

  @Test
  void theProbeAsksTheConfiguredSocket() throws Exception {
    HostFixture host = new HostFixture(root).dir("/run/elsewhere");
    Path sock = root.resolve("run/elsewhere/guard.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(sock));

      DaemonProbe.Status s = DaemonProbe.at(host.paths(), Path.of("/run/elsewhere/guard.sock")).probe();

      assertThat(s.socket()).isEqualTo(sock.toString());
      assertThat(s.accepts()).isTrue();
    } finally {
      Files.deleteIfExists(sock);
    }
  }

  @Test
  void listeningSocketMeansTheDaemonRuns() throws Exception {
    HostFixture host = new HostFixture(root).dir("/run/shmguard");
    Path sock = root.resolve("run/shmguard/advice.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(sock));

      List<Finding> found = new DaemonCheck().run(withProbeOf(host));

      assertThat(found).noneMatch(f -> f.id().equals("daemon-not-running"));
      assertThat(only(found, "daemon-advice").evidence()).containsExactly(sock + " accepts connections");
    } finally {
      Files.deleteIfExists(sock);
    }
  }

  @Test
  void socketLeftByAStoppedDaemonIsReported() throws Exception {
    HostFixture host = new HostFixture(root).dir("/run/shmguard").file("/run/shmguard/shmguard.pid", "999999\n");
    Path sock = root.resolve("run/shmguard/advice.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(sock));
    } // closed: the file stays, nobody listens

    Finding f = only(new DaemonCheck().run(withProbeOf(host)), "daemon-not-running");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("not answering");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("refuses connections"));
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("pid 999999, which is not running"));
  }

  @Test
  void missingSocketMeansNoDaemon() {
    Finding f = only(new DaemonCheck().run(withProbeOf(new HostFixture(root))), "daemon-not-running");

    assertThat(f.summary()).isEqualTo("the shmguard daemon is not running");
    assertThat(f.fix().get(0)).contains("systemctl enable --now shmguard");
  }

  @Test
  void adviceFromAWiredEngineIsShown() {
    HostFixture host = new HostFixture(root);
    DoctorContext base = host.context();
    AdviceSource engine = j -> List.of(new AdviceSource.Advice("/dev/shm", "NCCL_SHM_DISABLE=1", "12M free"));
    DoctorContext ctx = new DoctorContext(base.paths(), base.judgement(), base.gpus(), base.devices(), null,
        base.ncclVersion(), false, base.gpuMemory(), base.daemon(), engine);

    Finding f = only(new DaemonCheck().run(ctx), "daemon-advice");

    assertThat(f.evidence()).containsExactly("/dev/shm: NCCL_SHM_DISABLE=1  (12M free)");
  }
}
