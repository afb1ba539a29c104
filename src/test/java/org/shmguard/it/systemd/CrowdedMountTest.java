package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A watched tmpfs of hundreds of thousands, then a million, empty files: the daemon runs as its
 * own JVM with exactly the unit's JVM options (-Xmx96m, -XX:+ExitOnOutOfMemoryError ...), reaches
 * READY, reaps the real leaks among them, drains the empty NCCL files beyond reap.examineLimit
 * over several passes, raises too_many_files once, reports its RSS, and stays up; `shmguard
 * scan --json` under the same heap gives the right totals.
 */
class CrowdedMountTest {
  private static final Duration PATIENCE = Duration.ofSeconds(120);
  private static final int LEAKS = 3;
  private static final int EMPTY_NCCL = 12_000; // more than the 10,000 one pass examines: two passes drain them
  private static final Pattern RSS = Pattern.compile("RSS (\\d+) MiB");
  /** The latest STATUS= line with RSS that {@link #drain} read. */
  private volatile String lastStatus;

  @Test
  void daemonUnderTheUnitsHeapReapsLeaksAmongAQuarterMillionFilesAndAlertsOnce() throws Exception {
    crowdedMount(250_000, null);
  }

  @Test
  void daemonUnderTheUnitsHeapReapsLeaksAmongAMillionFilesAndAlertsOnce() throws Exception {
    crowdedMount(1_000_000, null);
  }

  /**
   * A user who keeps creating and removing files: every event asks for a pass over the whole
   * mount. Passes are spaced by twice their length, so the daemon spends about a third of the time
   * in passes, not all of it. Measured in the daemon's own pass times (on a shared machine its CPU
   * share says more about the neighbours), on a mount small enough for many passes in the window.
   */
  @Test
  void passesThatEventsAskForAreSpacedWhileAUserChurnsFiles() throws Exception {
    crowdedMount(60_000, Duration.ofSeconds(10));
  }

  /** @param churnFor how long a user churns files while the daemon's passes are timed; null for not at all */
  private void crowdedMount(int others, Duration churnFor) throws Exception {
    Sandbox.require();
    Path mkfiles = buildMkfiles();
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777,nr_inodes=" + (others + EMPTY_NCCL + 1000));
        NotifySocket socket = NotifySocket.bind(Sandbox.MOUNTS.resolve("notify-crowded-" + ProcessHandle.current().pid()))) {
      List<Path> leaks = new ArrayList<>();
      for (int i = 0; i < LEAKS; i++) {
        leaks.add(shm.createSegment("nccl-Leak0" + i, 65_536)); // the oldest files: examined first
      }
      Thread.sleep(50); // a clock tick apart: strictly older than every file below
      long started = System.nanoTime();
      Cmd.run(mkfiles.toString(), shm.path().toString(), "file-", String.valueOf(others));
      Cmd.run(mkfiles.toString(), shm.path().toString(), "nccl-empty-", String.valueOf(EMPTY_NCCL));
      System.out.printf("created %d files in %d ms%n", others + EMPTY_NCCL, (System.nanoTime() - started) / 1_000_000);
      // debug: the daemon logs each pass's length ("pass N took M ms"), which the churn below adds up
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
          + "log:\n  level: debug\n");
      Thread.sleep(1100); // the leaks pass their grace

      JsonNode scan = scanUnderTheUnitsHeap(config);
      JsonNode mount = scan.get("mounts").get(0);
      assertThat(mount.get("segments").asLong()).isEqualTo(others + EMPTY_NCCL + LEAKS);
      assertThat(mount.get("matching").asLong()).isEqualTo(EMPTY_NCCL + LEAKS);
      assertThat(mount.get("examined").asLong()).isEqualTo(10_000);
      assertThat(mount.get("notExamined").asLong()).isEqualTo(EMPTY_NCCL + LEAKS - 10_000);
      assertThat(mount.get("fileBytes").asLong()).isEqualTo(LEAKS * 65_536L);
      assertThat(mount.get("note").asText()).contains((EMPTY_NCCL + LEAKS - 10_000) + " more files with reapable names not shown");
      assertThat(scan.get("segments")).hasSize(10_000);
      assertThat(List.of(name(scan, 0), name(scan, 1), name(scan, 2))) // oldest first
          .containsExactlyInAnyOrder("nccl-Leak00", "nccl-Leak01", "nccl-Leak02");

      Path log = Sandbox.MOUNTS.resolve("crowded-" + ProcessHandle.current().pid() + ".log");
      ProcessBuilder pb = new ProcessBuilder(daemonCommand(config)).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("NOTIFY_SOCKET", socket.path().toString());
      pb.environment().put("MALLOC_ARENA_MAX", "2");
      Process daemon = pb.start();
      try {
        String ready = socket.receive(PATIENCE);
        assertThat(ready).as("READY after the first pass").isNotNull().startsWith("READY=1");
        for (Path leak : leaks) {
          Eventually.until("the daemon reaps " + leak.getFileName(), PATIENCE, () -> drained(socket) && !Files.exists(leak));
        }
        Eventually.until("the daemon drains the empty NCCL files over several passes", PATIENCE,
            () -> drained(socket) && files(shm.path()) == others);
        String status = latestStatusWithRss(socket);
        Matcher m = RSS.matcher(status);
        assertThat(m.find()).as("STATUS reports RSS: " + status).isTrue();
        long rssMib = Long.parseLong(m.group(1));
        System.out.printf("daemon among %d files: %s (RSS %d MiB)%n", others, status, rssMib);
        assertThat(rssMib).isBetween(1L, 400L);
        assertThat(daemon.isAlive()).as("the daemon is still up").isTrue();

        if (churnFor != null) {
          Churn churn = churn(daemon.pid(), shm.path(), log, churnFor, socket);
          System.out.printf("while a user churns files among %d: %d passes, %.0f%% of the time in passes, %.0f%% of one core,"
              + " median pause after a pass %.1f times its length%n",
              others, churn.passes(), 100 * churn.duty(), 100 * churn.cpuShare(), churn.medianSpacing());
          assertThat(churn.passes()).as("passes while files churn").isGreaterThanOrEqualTo(3);
          // twice by design once the burst allowance is spent (a sweep may fall in between, hence the
          // median); without the budget it was 0.2
          assertThat(churn.medianSpacing()).as("pause after a pass over its length, median, while files churn")
              .isGreaterThan(1.5);
        }
        assertThat(daemon.isAlive()).as("the daemon is still up").isTrue();
        String out = Files.readString(log);
        assertThat(count(out, "SHMGUARD_EVENT=too_many_files")).as("one too_many_files event").isEqualTo(1);
        assertThat(out).doesNotContain("OutOfMemoryError");
        assertThat(Files.exists(shm.file("file-0000000"))).as("files no pattern allows stay").isTrue();
        assertThat(files(shm.path())).as("files no pattern allows stay").isEqualTo(others);

        drain(socket);
        daemon.destroy(); // SIGTERM
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
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
  }

  /**
   * What the daemon did while files churned: passes, their share of the wall time, its CPU share,
   * and the median over consecutive passes of (the pause before the next pass) / (the pass's length).
   */
  record Churn(int passes, double duty, double cpuShare, double medianSpacing) {}

  private static final Pattern PASS = Pattern.compile("(?m)^(\\S+) DEBUG pass \\d+ took (\\d+) ms");

  /** Creates and removes files as fast as this thread can for {@code d}, and reads what the daemon did meanwhile. */
  private Churn churn(long pid, Path mount, Path log, Duration d, NotifySocket socket) throws Exception {
    churnFor(mount, Duration.ofSeconds(6), socket); // spends the two seconds of passes allowed back to back
    long from = Files.size(log);
    long cpu0 = cpuTicks(pid);
    long t0 = System.nanoTime();
    churnFor(mount, d, socket);
    long wallNanos = System.nanoTime() - t0;
    long cpu = cpuTicks(pid) - cpu0;
    byte[] all = Files.readAllBytes(log);
    for (int k = 0; k < 64; k++) {
      Files.deleteIfExists(mount.resolve("churn-" + k));
    }
    Matcher m = PASS.matcher(new String(all, (int) from, all.length - (int) from, java.nio.charset.StandardCharsets.UTF_8));
    List<long[]> passes = new ArrayList<>(); // {end in ms since the epoch, length in ms}
    long passMs = 0;
    while (m.find()) {
      long took = Long.parseLong(m.group(2));
      passes.add(new long[] {java.time.Instant.parse(m.group(1)).toEpochMilli(), took});
      passMs += took;
    }
    List<Double> spacing = new ArrayList<>();
    for (int p = 0; p + 1 < passes.size(); p++) {
      long pause = passes.get(p + 1)[0] - passes.get(p + 1)[1] - passes.get(p)[0];
      spacing.add(pause / (double) Math.max(1, passes.get(p)[1]));
    }
    java.util.Collections.sort(spacing);
    double median = spacing.isEmpty() ? Double.NaN : spacing.get(spacing.size() / 2);
    return new Churn(passes.size(), passMs * 1e6 / wallNanos, cpu * (1e9 / 100) / wallNanos, median); // USER_HZ is 100
  }

  /** utime + stime of {@code pid}, in clock ticks (/proc/PID/stat fields 14 and 15). */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  /** The unit's ExecStart JVM options, with the jar swapped for this build's classes. */
  static List<String> unitJvmOptions() throws IOException {
    String exec = Files.readString(Path.of("systemd/shmguard.service")).lines()
        .filter(l -> l.startsWith("ExecStart=")).findFirst().orElseThrow();
    List<String> words = Arrays.asList(exec.substring("ExecStart=".length()).trim().split("\\s+"));
    int jar = words.indexOf("-jar");
    assertThat(jar).as("ExecStart runs a jar: " + exec).isPositive();
    List<String> options = words.subList(1, jar);
    assertThat(options).contains("-Xmx96m", "-XX:+ExitOnOutOfMemoryError");
    return options;
  }

  private static List<String> daemonCommand(Path config) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Sandbox.javaBinary());
    cmd.addAll(unitJvmOptions());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c",
        config.toString()));
    return cmd;
  }

  private static JsonNode scanUnderTheUnitsHeap(Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Sandbox.javaBinary());
    cmd.addAll(unitJvmOptions());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "scan", "--json", "-c",
        config.toString()));
    Path out = Files.createTempFile(Sandbox.MOUNTS, "scan-", ".json");
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(false).redirectOutput(out.toFile())
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("scan finishes").isTrue();
      assertThat(p.exitValue()).as("scan's exit status").isZero();
      return new ObjectMapper().readTree(out.toFile());
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Regular files on the mount, from statvfs: used inodes less the root directory. */
  private static long files(Path mount) {
    try {
      FsUsage u = Linux.get().statvfs(mount.toString());
      return u.inodes() - u.freeInodes() - 1;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** The latest STATUS line that reports RSS (every pass's does), after reading all that were sent. */
  private String latestStatusWithRss(NotifySocket socket) throws Exception {
    drain(socket);
    Eventually.until("a STATUS line with RSS", PATIENCE, () -> drained(socket) && lastStatus != null);
    return lastStatus;
  }

  /**
   * Reads what the daemon sent, as systemd would: sd_notify blocks once the listener's queue is
   * full (net.unix.max_dgram_qlen datagrams), and the worker with it.
   */
  private void drain(NotifySocket socket) throws InterruptedException {
    String m;
    while ((m = socket.receive(Duration.ofMillis(1))) != null) {
      if (m.contains("STATUS=") && RSS.matcher(m).find()) {
        lastStatus = m;
      }
    }
  }

  private void churnFor(Path mount, Duration d, NotifySocket socket) throws Exception {
    long end = System.nanoTime() + d.toNanos();
    int i = 0;
    while (System.nanoTime() < end) {
      Path f = mount.resolve("churn-" + (i++ % 64));
      Files.deleteIfExists(f);
      Files.createFile(f);
      if (i % 256 == 0) {
        drain(socket);
      }
    }
  }

  /** {@link #drain}, for conditions: always true. */
  private boolean drained(NotifySocket socket) {
    try {
      drain(socket);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }

  private static String name(JsonNode scan, int i) {
    return scan.get("segments").get(i).get("name").asText();
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }

  private static Path buildMkfiles() throws Exception {
    Files.createDirectories(Sandbox.MOUNTS);
    Path src = Sandbox.MOUNTS.resolve("mkfiles-" + ProcessHandle.current().pid() + ".c");
    Path bin = Sandbox.MOUNTS.resolve("mkfiles-" + ProcessHandle.current().pid());
    if (Files.exists(bin)) {
      return bin;
    }
    try (InputStream in = CrowdedMountTest.class.getResourceAsStream("/memory/mkfiles.c")) {
      Files.copy(in, src);
    }
    Cmd.run("cc", "-O2", "-o", bin.toString(), src.toString());
    Files.delete(src);
    return bin;
  }
}
