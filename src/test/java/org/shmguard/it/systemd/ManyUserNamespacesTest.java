package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * Issue 20, item 3: ordinary users' namespaces, each with a tmpfs of 10,000 files whose names are
 * {@code nccl-} and 230 more characters and 10,000 hard links of one more, raised the daemon's
 * heap past the unit's -Xmx96m at every start (four were enough). The bound is now global: a
 * mount shmguard only reports is measured, never listed, and at most namespaces.reportLimit such
 * namespaces are looked at, in turn per user. Run as the unit runs it (its JVM options), the
 * daemon reaches READY, reaps a leak on the host's (the sandbox's) /dev/shm, stays up and says
 * what it did not examine; scan --json under the same heap counts it, and a second user's
 * namespace is reported however many the first user makes.
 */
class ManyUserNamespacesTest {
  private static final Duration PATIENCE = Duration.ofSeconds(90);
  private static final int NAMESPACES = 5; // four ended the daemon before
  private static final int FILES = 10_000;
  private static final int LINKS = 10_000;
  private static final int FIRST_USER = 65534;
  private static final int SECOND_USER = 65533;
  private static final Pattern RSS = Pattern.compile("RSS (\\d+) MiB");

  @Test
  void daemonUnderTheUnitsHeapOutlivesUsersCrowdedNamespacesReapsTheHostsLeakAndSaysWhatItSkipped() throws Exception {
    Sandbox.require();
    Path mkfiles = CProgram.build("memory/mkfiles.c");
    List<UserNsAttacker> users = new ArrayList<>();
    Path leak = Path.of("/dev/shm/nccl-HostLeak1");
    try {
      for (int i = 0; i < NAMESPACES; i++) {
        users.add(UserNsAttacker.crowded(i == NAMESPACES - 1 ? SECOND_USER : FIRST_USER, mkfiles, FILES, LINKS));
      }
      Files.write(leak, new byte[65_536]);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
          + "metrics:\n  listen: \"\"\n");
      Thread.sleep(1100); // the leak passes its grace

      // every namespace reported (the default limit is 256): measured, none listed
      Path log = Sandbox.MOUNTS.resolve("many-userns-" + ProcessHandle.current().pid() + ".log");
      Path notify = Sandbox.MOUNTS.resolve("notify-many-userns-" + ProcessHandle.current().pid());
      try (NotifySocket socket = NotifySocket.bind(notify)) {
        ProcessBuilder pb = new ProcessBuilder(command(config, "daemon")).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        pb.environment().put("NOTIFY_SOCKET", socket.path().toString());
        pb.environment().put("MALLOC_ARENA_MAX", "2");
        Process daemon = pb.start();
        try {
          String ready = receive(socket, "READY=1");
          assertThat(ready).as("READY after the first complete pass").isNotNull();
          Eventually.until("the daemon reaps the host's leak", PATIENCE, () -> !Files.exists(leak));
          Thread.sleep(3000); // a few more passes and rediscoveries
          String status = receive(socket, "STATUS=");
          assertThat(daemon.isAlive()).as("the daemon is still up").isTrue();
          String out = Files.readString(log);
          assertThat(out).doesNotContain("OutOfMemoryError");
          assertThat(out).contains("not examined in this pass: " + NAMESPACES
              + " mounts shmguard only reports were measured, not listed (");
          Matcher m = RSS.matcher(status == null ? "" : status);
          assertThat(m.find()).as("STATUS with RSS: " + status).isTrue();
          System.out.printf("daemon beside %d users' namespaces of %d files and %d links each: %s%n", NAMESPACES,
              FILES, LINKS, status);
          daemon.destroy(); // SIGTERM
          assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).isTrue();
          assertThat(daemon.exitValue()).isZero();
        } catch (AssertionError e) {
          String out = Files.exists(log) ? Files.readString(log) : "";
          throw new AssertionError(e.getMessage() + "\ndaemon's output (last 4000 chars):\n"
              + out.substring(Math.max(0, out.length() - 4000)), e);
        } finally {
          daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
          Files.deleteIfExists(log);
        }
      }

      // two namespaces at most: one of each user, whatever the first user made
      Path limited = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
          + "namespaces:\n  reportLimit: 2\n");
      JsonNode scan = scan(limited);
      JsonNode coverage = scan.get("coverage");
      assertThat(coverage.get("reportOnlyMounts").asInt()).isEqualTo(2);
      assertThat(coverage.get("namespacesLeftOut").asInt()).isEqualTo(NAMESPACES - 2);
      assertThat(coverage.get("reportOnlyFiles").asLong()).as("statvfs's count of the two mounts' files")
          .isGreaterThanOrEqualTo(2L * (FILES + 1));
      assertThat(coverage.get("note").asText()).contains("3 namespaces of other user namespaces left out");
      List<String> paths = new ArrayList<>();
      for (JsonNode mount : scan.get("mounts")) {
        paths.add(mount.get("path").asText());
        if (mount.has("reportOnly")) {
          assertThat(mount.get("note").asText()).startsWith("measured, not listed");
          assertThat(mount.has("examined")).isFalse();
        }
      }
      UserNsAttacker second = users.get(NAMESPACES - 1);
      assertThat(paths).as("the second user's namespace is reported beside the first user's many")
          .contains("/proc/" + second.pid() + "/root/dev/shm");
      assertThat(scan.get("segments")).as("no file of a mount shmguard only reports is kept").isEmpty();
      for (UserNsAttacker u : users) {
        assertThat(u.file("nccl-linked")).as("the users' files are theirs").exists();
      }
    } finally {
      for (UserNsAttacker u : users) {
        u.close();
      }
      Files.deleteIfExists(leak);
    }
  }

  /**
   * The other half of the global bound, on mounts shmguard acts in: three of root's mounts, each
   * 10,000 empty files named {@code nccl-} and 230 more characters (failed NCCL creations, reaped
   * at once, each with an allocation_failed event) and 10,000 hard links of one more. Before
   * reap.examineTotal each mount kept its own 20,000; now the pass keeps at most 10,000 of each
   * kind over all three, and the daemon drains the 30,000 over several passes under the unit's heap.
   */
  @Test
  void daemonUnderTheUnitsHeapDrainsRootsCrowdedMountsWithinTheGlobalBudget() throws Exception {
    Sandbox.require();
    Path mkfiles = CProgram.build("memory/mkfiles.c");
    String longName = "nccl-" + "0".repeat(223);
    List<TmpfsMount> mounts = new ArrayList<>();
    Path log = Sandbox.MOUNTS.resolve("many-mounts-" + ProcessHandle.current().pid() + ".log");
    try {
      StringBuilder paths = new StringBuilder();
      for (int i = 0; i < 3; i++) {
        TmpfsMount m = TmpfsMount.create("size=8m,nr_inodes=" + (FILES + LINKS + 100));
        mounts.add(m);
        Cmd.run(mkfiles.toString(), m.path().toString(), longName, String.valueOf(FILES));
        Files.createFile(m.file("nccl-linked"));
        Cmd.run(mkfiles.toString(), m.path().toString(), longName + "L", String.valueOf(LINKS), "0",
            "nccl-linked");
        paths.append(", ").append(m.path());
      }
      Path config = TestConfig.write("mounts: [auto" + paths + "]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
          + "metrics:\n  listen: \"\"\n");
      Process daemon = new ProcessBuilder(command(config, "daemon")).redirectErrorStream(true).redirectOutput(log.toFile())
          .start();
      try {
        for (TmpfsMount m : mounts) {
          Eventually.until("the daemon reaps the failed creations in " + m.path(), Duration.ofSeconds(180),
              () -> count(m.path()) == LINKS + 1);
        }
        assertThat(daemon.isAlive()).as("the daemon is still up").isTrue();
        String out = Files.readString(log);
        assertThat(out).doesNotContain("OutOfMemoryError");
        assertThat(out).contains("beyond this pass's share (reap.examineLimit per mount, reap.examineTotal 10000 over all)");
        daemon.destroy();
        assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).isZero();
      } catch (AssertionError e) {
        String out = Files.exists(log) ? Files.readString(log) : "";
        throw new AssertionError(e.getMessage() + "\ndaemon's output (last 2000 chars):\n"
            + out.substring(Math.max(0, out.length() - 2000)), e);
      } finally {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } finally {
      Files.deleteIfExists(log);
      for (TmpfsMount m : mounts) {
        m.close();
      }
    }
  }

  /** Entries in a directory. */
  private static long count(Path dir) {
    try (var s = Files.list(dir)) {
      return s.count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The next datagram that contains {@code what}, or null after the patience. */
  private static String receive(NotifySocket socket, String what) throws InterruptedException {
    long end = System.nanoTime() + PATIENCE.toNanos();
    String last = null;
    while (System.nanoTime() < end) {
      String m = socket.receive(Duration.ofMillis(200));
      if (m != null && m.contains(what)) {
        last = m;
        // the latest one already sent
        String more;
        while ((more = socket.receive(Duration.ofMillis(1))) != null) {
          if (more.contains(what)) {
            last = more;
          }
        }
        return last;
      }
    }
    return last;
  }

  private static List<String> command(Path config, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Sandbox.javaBinary());
    cmd.addAll(CrowdedMountTest.unitJvmOptions());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main"));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("-c", config.toString()));
    return cmd;
  }

  private static JsonNode scan(Path config) throws Exception {
    Path out = Files.createTempFile(Sandbox.MOUNTS, "scan-", ".json");
    try {
      List<String> cmd = command(config, "scan", "--json");
      Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("scan finishes").isTrue();
      assertThat(p.exitValue()).as("scan's exit status").isZero();
      return new ObjectMapper().readTree(out.toFile());
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
