package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Root-only verbs are served to root of the host alone: uid 0 in shmguard's own user, mount and
 * PID namespaces. A real server on a real socket; real clients (/usr/bin/python3) that are uid 0 in
 * namespaces of their own made by unshare(1), without a user namespace as a container without
 * one is, and with one whose root is the host's uid 0.
 */
class HostRootPeerTest {
  private static final String ASK = "import socket, sys\n"
      + "s = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ns.sendall((sys.argv[2] + '\\n').encode())\n"
      + "out = b''\nwhile True:\n  b = s.recv(4096)\n  if not b:\n    break\n  out += b\nsys.stdout.write(out.decode())\n";
  private TmpfsMount shm;
  private AdviceServer server;
  private Path socket;
  private String dev;
  private final AtomicReference<String> acted = new AtomicReference<>();

  @BeforeEach
  void start() throws IOException {
    Sandbox.require();
    shm = TmpfsMount.create("size=64m,mode=1777");
    dev = shm.dev().toString();
    Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "2m")), HostPaths.system()).judge();
    socket = Sandbox.MOUNTS.resolve("advice-root-" + ProcessHandle.current().pid() + ".sock");
    HostActions actions = new HostActions() {
      @Override
      public String remount(ShmMount mount, Long size) {
        acted.set("remount " + mount.dev() + " " + size);
        return "remounted";
      }

      @Override
      public String clean(boolean dryRun) {
        acted.set("clean " + dryRun);
        return "cleaned";
      }
    };
    server = AdviceServer.bind(socket, new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8), actions),
        AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();
  }

  @AfterEach
  void stop() throws IOException {
    if (server != null) {
      server.close();
    }
    if (shm != null) {
      shm.close();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "unshare --mount --pid --fork|mount",
      "unshare --pid --fork|PID",
      "unshare --mount|mount",
      "unshare --user --map-root-user|user"})
  void rootInNamespacesOfItsOwnIsRefusedRemountCleanAndScanButAnsweredAdvise(String unshare, String namespace) {
    String why = "this peer is uid 0 but it is root in another " + namespace + " namespace, and may ask ADVISE, CHECK and PING";

    assertThat(ask(unshare, "REMOUNT v1 dev=" + dev + " size=134217728"))
        .isEqualTo("ERR v1 denied REMOUNT changes the host and needs root of the host; " + why + "\n");
    assertThat(ask(unshare, "CLEAN v1 dry-run=true"))
        .isEqualTo("ERR v1 denied CLEAN changes the host and needs root of the host; " + why + "\n");
    assertThat(ask(unshare, "SCAN v1"))
        .isEqualTo("ERR v1 denied SCAN shows every user's processes and needs root of the host; " + why + "\n");
    assertThat(acted.get()).isNull();
    assertThat(ask(unshare, "ADVISE v1 ranks=4 dev=" + dev)).startsWith("OK v1\n").contains("SHMGUARD_ADVICE=");
    assertThat(ask(unshare, "PING")).isEqualTo("OK v1\npong\n");
  }

  @Test
  void rootInShmguardsOwnNamespacesIsServed() {
    assertThat(ask("", "REMOUNT v1 dev=" + dev + " size=134217728")).isEqualTo("OK v1\nremounted\n");
    assertThat(acted.get()).isEqualTo("remount " + dev + " 134217728");
    assertThat(ask("", "CLEAN v1 dry-run=true")).isEqualTo("OK v1\ncleaned\n");
    assertThat(acted.get()).isEqualTo("clean true");
  }

  @Test
  void anOrdinaryUserIsRefusedAsBefore() {
    assertThat(ask("setpriv --reuid=65534 --regid=65534 --clear-groups", "CLEAN v1 dry-run=true"))
        .isEqualTo("ERR v1 denied CLEAN changes the host and only root may ask it; uid 65534 may ask ADVISE, CHECK and PING\n");
    assertThat(acted.get()).isNull();
  }

  @Test
  void rootOutsideTheHostsNamespacesSpendsABucketOfItsOwnNotTheHostRoots() throws Exception {
    Path other = Sandbox.MOUNTS.resolve("advice-rate-" + ProcessHandle.current().pid() + ".sock");
    Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "2m")), HostPaths.system()).judge();
    try (AdviceServer small = AdviceServer.bind(other, new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none()), AdviceServer.Limits.of(Duration.ofSeconds(5), 4).withRate(2, 1)).start()) {
      List<String> replies = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        replies.add(ask("unshare --mount", other, "PING"));
      }
      assertThat(replies).containsExactly("OK v1\npong\n", "OK v1\npong\n",
          "ERR v1 rate-limited uid 0 asked more than 2 requests at once or 1 a second; answered again once it asks less often\n");
      assertThat(ask("", other, "PING")).as("the host's root has its own bucket").isEqualTo("OK v1\npong\n");
    }
  }

  private String ask(String prefix, String request) {
    return ask(prefix, socket, request);
  }

  /** The reply to {@code request}, asked by /usr/bin/python3 run under {@code prefix} (words, may be empty). */
  private String ask(String prefix, Path at, String request) {
    List<String> command = new ArrayList<>();
    if (!prefix.isEmpty()) {
      command.addAll(List.of(prefix.split(" ")));
    }
    command.addAll(List.of("/usr/bin/python3", "-I", "-S", "-c", ASK, at.toString(), request));
    Cmd.Result r = Cmd.exec(command.toArray(String[]::new));
    assertThat(r.status()).as(r.err()).isZero();
    return r.out();
  }
}
