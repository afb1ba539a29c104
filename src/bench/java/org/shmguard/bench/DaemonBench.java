package org.shmguard.bench;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's figures, against {@code java -jar shmguard.jar daemon} as an external process in the
 * sandbox: start to READY, idle memory and CPU, the delay from SIGKILL of a segment's last holder to
 * its unlink, a burst of creations, and the advice socket. It works against whatever daemon the
 * branch has: where the daemon sends no READY=1 it times start to the first complete pass instead
 * and says so.
 */
final class DaemonBench {
  private static final long SECOND = 1_000_000_000L;
  /** The grace in the bench's configuration: the fixture's unheld segments and the burst are reaped after it. */
  static final int GRACE_SECONDS = 10;
  private static final int CLK_TCK = 100;
  /** Seconds between the end of the fixture's reaping and the start of the idle window. */
  private static final int QUIET_SECONDS = 30;

  private final Results r;
  private final BenchParams params;
  private final NativeTools tools;
  /** The daemon as the packages start it (the default), or as -Dbench.daemonLaunch=plain asks. */
  private final Launch launch;

  private DaemonBench(Results r, BenchParams params, NativeTools tools, Launch launch) {
    this.r = r;
    this.params = params;
    this.tools = tools;
    this.launch = launch;
  }

  /**
   * The daemon as shipped (the launcher's JVM options and the archive make-cds-archive made), or,
   * with -Dbench.daemonLaunch=plain, {@code java [bench.daemonJvmArgs] -jar}; bench.daemonJvmArgs
   * go to the launcher as SHMGUARD_JAVA_OPTS. Then the JVM's default options beside it: start to
   * READY and idle RSS.
   */
  static void run(Results r, BenchParams params, NativeTools tools) throws Exception {
    String extra = System.getProperty("bench.daemonJvmArgs", "").trim();
    Launch launch = "plain".equals(System.getProperty("bench.daemonLaunch", "shipped"))
        ? Launch.plain(params.jar(), extra.isEmpty() ? List.of() : List.of(extra.split("\\s+")))
        : Launch.shipped(params.basedir(), params.jar(), params.out().resolve("shipped"), extra);
    DaemonBench bench = new DaemonBench(r, params, tools, launch);
    bench.runAll();
    if (!launch.name().equals("default")) {
      new DaemonBench(r, params, tools, Launch.plain(params.jar(), List.of())).defaults();
    }
  }

  /** Scan CPU and reap delay with {@code processes} holders (4 segments each, a quarter held): the large row. */
  static void large(Results r, BenchParams params, NativeTools tools, ScanBench scan, int processes) throws Exception {
    String extra = System.getProperty("bench.daemonJvmArgs", "").trim();
    Launch launch = Launch.shipped(params.basedir(), params.jar(), params.out().resolve("shipped"), extra);
    DaemonBench bench = new DaemonBench(r, params, tools, launch);
    String key = "scaling.p" + processes + "_s" + (4 * processes);
    Bench.log("large: %d processes, %d segments", processes, 4 * processes);
    try (NotifyListener notify = new NotifyListener(tools, params.out().resolve("notify-large.sock"));
         Fixture f = Fixture.create(tools, Bench.SHM, processes, 4 * processes, params.threadedEvery())) {
      ScanBench.Figures fig = scan.measure(f, 11, false);
      r.put(key + ".shmguardCpuMs", fig.shmguard().cpu().median());
      r.put(key + ".floorFullCpuMs", fig.floorFull().cpu().median());
      r.put(key + ".ratioFloorFull", fig.ratio(fig.floorFull()));
      r.put(key + ".floorFdTablesCpuMs", fdTablesFloor(tools, f));
      Path config = bench.writeConfig("daemon-large.yaml", false, "info");
      // The scan rows above took longer than the grace on a slow kernel (21 s on 2026-11-29): the
      // first pass then reaped 6,000 files before READY, and the row measured that, not a start.
      // As in the 400-holder rows, the daemon starts on files younger than the grace; settleMs is the reaping.
      f.touch();
      try (DaemonProcess d = DaemonProcess.start(launch, config, notify.socket())) {
        bench.awaitFirstPass(d, notify, true);
        r.put(key + ".startToReadyMs", (notify.await("READY=1", d.startNanos(), System.nanoTime()) - d.startNanos()) / 1e6);
        bench.settle(d, f, key + ".");
        bench.reapDelay(d, f, Math.min(params.kills(), 100), key + ".reapDelayMs");
        r.put(key + ".rssMiB", d.rssKiB() / 1024.0);
        r.put(key + ".aliveAtEnd", d.isAlive());
      }
    }
    r.note(key + ".floorFdTablesCpuMs", "procfloor \"fds\": the kernel work of an exit pass's confirming read, every fd "
        + "table as floorFull reads it (fdinfo where a link is a path) and no maps: CPU, median of 11 warm passes");
    r.note(key, "the large row: " + processes + " holder processes, " + 4 * processes + " segments; scan CPU as in "
        + "the grid (median of 11, Engine.judge in the bench JVM); the shipped daemon's reap delay over "
        + Math.min(params.kills(), 100) + " SIGKILLs, measured as reapDelayMs");
  }

  /**
   * The kernel work of an exit pass's confirming read over {@code f}'s processes (every fd table,
   * fdinfo where a link is a path; no maps): CPU ms, median of 11 warm passes.
   */
  private static double fdTablesFloor(NativeTools tools, Fixture f) throws Exception {
    try (FloorScanner floor = new FloorScanner(tools)) {
      floor.fdTablesPass(f.mount().toString());
      List<Long> cpu = new ArrayList<>();
      for (int i = 0; i < 11; i++) {
        cpu.add(floor.fdTablesPass(f.mount().toString()).cpuNanos());
      }
      return Stats.ofNanos(cpu).median();
    }
  }

  private void runAll() throws Exception {
    r.put("daemon.command", launch.shown() + " daemon -c CONFIG");
    r.put("daemon.launch", launch.name());
    r.put("daemon.archive", launch.archive() == null ? "none" : launch.archive().getFileName().toString());
    r.note("daemon.command", "shipped: packaging/bin/shmguard (its JVM options) with the archive that "
        + "packaging/share/make-cds-archive made in the sandbox as postinst does (an AOT cache on Java 24+, "
        + "AppCDS before); the figures without a prefix are of this daemon, default.* of java -jar with the JVM's "
        + "default options");
    Path socket = params.out().resolve("notify.sock");
    try (NotifyListener notify = new NotifyListener(tools, socket);
         Fixture f = Fixture.create(tools, Bench.SHM, params.processes(), params.segments(),
             params.threadedEvery())) {
      boolean ready = startToReady(notify, "");
      Path config = writeConfig("daemon.yaml", false, ready ? "info" : "debug");
      Bench.log("daemon: long run (idle, reap delay, burst)");
      try (DaemonProcess d = DaemonProcess.start(launch, config, socket)) {
        awaitFirstPass(d, notify, ready);
        settle(d, f, "daemon.");
        idle(d);
        reapDelay(d, f, params.kills(), "reapDelayMs");
        burst(d, f);
        socket();
        ColdScanBench.run(r, Path.of("/run/shmguard/advice.sock"));
        r.put("daemon.aliveAtEnd", d.isAlive());
      }
    }
  }

  /** The JVM's default options beside the shipped ones: start to READY, and RSS once idle. */
  private void defaults() throws Exception {
    Bench.log("daemon: default JVM options (java -jar)");
    Path socket = params.out().resolve("notify-default.sock");
    try (NotifyListener notify = new NotifyListener(tools, socket);
         Fixture f = Fixture.create(tools, Bench.SHM, params.processes(), params.segments(),
             params.threadedEvery())) {
      startToReady(notify, "default.");
      Path config = writeConfig("daemon-default.yaml", false, "info");
      try (DaemonProcess d = DaemonProcess.start(launch, config, socket)) {
        awaitFirstPass(d, notify, true);
        settle(d, f, "default.");
        Thread.sleep(QUIET_SECONDS * 1000L);
        r.put("default.idle.rssMiB", d.rssKiB() / 1024.0);
      }
    }
    r.put("default.command", launch.shown() + " daemon -c CONFIG");
    r.note("default.idle.rssMiB", "VmRSS of java -jar with the JVM's default options, " + QUIET_SECONDS
        + " s after the fixture's unheld segments were reaped (the shipped daemon's idle.rssMiB is read at the end of "
        + "its idle window, " + QUIET_SECONDS + " s + idleSeconds after)");
  }

  /** Several cold starts, each to READY=1 (or, without it, to the first complete pass), then SIGTERM. */
  private boolean startToReady(NotifyListener notify, String prefix) throws Exception {
    Path config = writeConfig("daemon-start.yaml", true, "debug");
    List<Long> ready = new ArrayList<>();
    List<Long> firstPass = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Bench.log("daemon: start %d of 5", i + 1);
      try (DaemonProcess d = DaemonProcess.start(launch, config, notify.socket())) {
        long deadline = d.startNanos() + 60 * SECOND;
        long rd = -1;
        long pass = -1;
        // Whichever comes first: READY=1, or the first pass's log line of a daemon that sends none.
        while (rd < 0 && pass < 0 && System.nanoTime() < deadline && d.isAlive()) {
          long step = System.nanoTime() + 100_000_000L;
          rd = notify.await("READY=1", d.startNanos(), step);
          pass = d.awaitLine(DaemonBench::isPassLine, System.nanoTime());
        }
        if (rd < 0 && pass > 0) {
          rd = notify.await("READY=1", d.startNanos(), pass + 2 * SECOND); // a late READY still counts
        }
        if (rd > 0) {
          ready.add(rd - d.startNanos());
        }
        if (pass > 0) {
          firstPass.add(pass - d.startNanos());
        }
        if (rd < 0 && pass < 0) {
          throw new IOException("the daemon neither sent READY=1 nor logged a pass in 60 s: " + d.lastLines(20));
        }
      }
    }
    if (!firstPass.isEmpty()) {
      r.put(prefix + "startToFirstPassMs", Stats.ofNanos(firstPass).median());
      r.note(prefix + "startToFirstPassMs", "from exec of java to the daemon's first \"pass:\" log line (debug), median of 5, "
          + "with " + params.processes() + " holders and " + params.segments() + " segments");
    }
    if (ready.size() == 5) {
      r.put(prefix + "startToReadyMs", Stats.ofNanos(ready).median());
      r.put(prefix + "startToReadyMaxMs", Stats.ofNanos(ready).max());
      r.put(prefix + "startToReadySource", "READY=1 on NOTIFY_SOCKET");
      return true;
    }
    if (!firstPass.isEmpty()) {
      r.put(prefix + "startToReadyMs", Stats.ofNanos(firstPass).median());
      r.put(prefix + "startToReadySource", "first complete pass (log line): this daemon sends no READY=1");
      r.note("startToReadyMs", "this daemon sends no sd_notify READY=1; the figure is start to the end of its first "
          + "complete pass, the moment READY=1 is meant to mark");
    }
    return false;
  }

  private static boolean isPassLine(String line) {
    return line.contains(" pass: ") || line.contains("DEBUG pass");
  }

  private void awaitFirstPass(DaemonProcess d, NotifyListener notify, boolean ready) throws Exception {
    long deadline = d.startNanos() + 60 * SECOND;
    long t = ready ? notify.await("READY=1", d.startNanos(), deadline) : d.awaitLine(DaemonBench::isPassLine, deadline);
    if (t < 0) {
      throw new IOException("the daemon did not finish a first pass in 60 s: " + d.lastLines(20));
    }
  }

  /** Waits until the daemon has reaped the fixture's unheld segments (older than the grace), so idle is idle. */
  private void settle(DaemonProcess d, Fixture f, String prefix) throws Exception {
    long start = System.nanoTime();
    long deadline = start + (GRACE_SECONDS + 100) * SECOND;
    int left = f.files().size();
    while (left > f.heldLinked() && System.nanoTime() < deadline) {
      Thread.sleep(200);
      left = f.files().size();
    }
    r.put(prefix + "settleMs", (System.nanoTime() - start) / 1e6);
    r.put(prefix + "unheldLeftAfterSettle", left - f.heldLinked());
    r.note(prefix + "settleMs", "after the first pass, until the daemon had reaped the fixture's "
        + (f.segments() - f.heldLinked() - f.heldUnlinked()) + " unheld segments (grace " + GRACE_SECONDS + " s)");
  }

  private void idle(DaemonProcess d) throws Exception {
    // The reaping of the fixture's files leaves compilation and collection behind it: let that end
    // first, so the window holds only what the daemon does when nothing happens. (A daemon that
    // waited for its 30 s sweep to reap them had this quiet time before the window by accident.)
    Bench.log("daemon: %d s after the reaping, then idle for %d s", QUIET_SECONDS, params.idleSeconds());
    Thread.sleep(QUIET_SECONDS * 1000L);
    long ticks0 = d.cpuTicks();
    long sched0 = d.cpuNanos();
    long t0 = System.nanoTime();
    long maxRss = 0;
    long rss = 0;
    while (System.nanoTime() - t0 < params.idleSeconds() * SECOND) {
      rss = d.rssKiB();
      maxRss = Math.max(maxRss, rss);
      Thread.sleep(1000);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    long ticks = d.cpuTicks() - ticks0;
    long sched = d.cpuNanos() - sched0;
    r.put("idle.seconds", seconds);
    r.put("idle.rssMiB", rss / 1024.0);
    r.put("idle.rssMaxMiB", maxRss / 1024.0);
    r.put("idle.cpuPercent", 100.0 * ticks / CLK_TCK / seconds);
    r.put("idle.cpuPercentSchedstat", 100.0 * sched / 1e9 / seconds);
    r.note("idle.cpuPercent", "utime + stime from /proc/PID/stat over the idle window (10 ms ticks), as % of one core; "
        + "cpuPercentSchedstat sums /proc/PID/task/*/schedstat (ns). The window starts " + QUIET_SECONDS + " s after the fixture's "
        + "unheld segments were reaped. rssMiB is VmRSS at the end, rssMaxMiB the most "
        + "seen (sampled each second). The host holds " + params.processes() + " holders and their segments meanwhile");
  }

  /** SIGKILL last holders in rounds and time each of their segments' unlinks, seen through inotify. */
  private void reapDelay(DaemonProcess d, Fixture f, int kills, String key) throws Exception {
    Bench.log("daemon: reap delay over %d kills", kills);
    Map<String, Long> deleted = new ConcurrentHashMap<>();
    try (WatchService ws = f.mount().getFileSystem().newWatchService()) {
      f.mount().register(ws, StandardWatchEventKinds.ENTRY_DELETE);
      Thread watcher = new Thread(() -> watch(ws, deleted), "unlink-watch");
      watcher.setDaemon(true);
      watcher.start();
      List<Fixture.HolderProc> victims = new ArrayList<>(f.holders());
      java.util.Collections.shuffle(victims, new Random(3));
      victims = victims.subList(0, Math.min(kills, victims.size()));
      int perRound = 50;
      Random gap = new Random(4);
      List<Double> delays = new ArrayList<>();
      int unreaped = 0;
      for (int from = 0; from < victims.size(); from += perRound) {
        // A random pause first, so that kills fall at random phases of any periodic work in the
        // daemon rather than just after the pass that ended the previous round.
        Thread.sleep(gap.nextInt(30_000));
        Map<String, Long> killedAt = new HashMap<>();
        for (Fixture.HolderProc h : victims.subList(from, Math.min(victims.size(), from + perRound))) {
          long t = System.nanoTime();
          Fixture.kill(h);
          h.linked().forEach(n -> killedAt.put(n, t));
          Thread.sleep(50 + gap.nextInt(100)); // kills spread out, as crashes are
        }
        long deadline = System.nanoTime() + 120 * SECOND;
        while (!deleted.keySet().containsAll(killedAt.keySet()) && System.nanoTime() < deadline && d.isAlive()) {
          Thread.sleep(50);
        }
        for (Map.Entry<String, Long> e : killedAt.entrySet()) {
          Long at = deleted.get(e.getKey());
          if (at == null) {
            unreaped++;
          } else {
            delays.add((at - e.getValue()) / 1e6);
          }
        }
      }
      ws.close();
      watcher.join(2000);
      r.put(key + ".kills", victims.size());
      r.put(key + ".segments", delays.size());
      r.put(key + ".unreaped", unreaped);
      if (!delays.isEmpty()) {
        Stats s = Stats.ofMillis(delays);
        r.put(key + ".p50", s.median());
        r.put(key + ".p99", s.percentile(99));
        r.put(key + ".max", s.max());
      } else {
        r.missing(key + ".p50", "no segment was reaped within 120 s of its holder's SIGKILL");
        r.missing(key + ".p99", "no segment was reaped within 120 s of its holder's SIGKILL");
      }
      r.note(key, "per segment, SIGKILL of its only holder to the unlink seen by inotify (IN_DELETE), "
          + "kills in rounds of " + perRound + " spaced 50-150 ms, each round after a random 0-30 s pause; a segment not unlinked within 120 s counts as unreaped");
    }
  }

  private static void watch(WatchService ws, Map<String, Long> deleted) {
    try {
      while (true) {
        WatchKey key = ws.take();
        long t = System.nanoTime();
        for (WatchEvent<?> e : key.pollEvents()) {
          if (e.context() instanceof Path p) {
            deleted.putIfAbsent(p.toString(), t);
          }
        }
        key.reset();
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // done
    }
  }

  /** Creates many segments at once (unheld); each must get its verdict, leaked after the grace, and be reaped. */
  private void burst(DaemonProcess d, Fixture f) throws Exception {
    Bench.log("daemon: burst of %d creations", params.burst());
    int before = f.files().size();
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(tools.fixture(), f.mount().toString(), Integer.toString(params.burst()), "0", "0",
        Long.toString(Fixture.SEGMENT_BYTES), "1000000").redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String ready = new String(p.getInputStream().readNBytes(6), java.nio.charset.StandardCharsets.US_ASCII);
    long created = System.nanoTime();
    p.getOutputStream().close();
    p.waitFor(30, TimeUnit.SECONDS);
    if (!ready.startsWith("ready")) {
      throw new IOException("burst creation failed");
    }
    long deadline = created + (GRACE_SECONDS + 150) * SECOND;
    int left = f.files().size() - before;
    while (left > 0 && System.nanoTime() < deadline && d.isAlive()) {
      Thread.sleep(100);
      left = f.files().size() - before;
    }
    long done = System.nanoTime();
    r.put("burst.files", params.burst());
    r.put("burst.createMs", (created - t0) / 1e6);
    r.put("burst.missed", Math.max(0, left));
    if (left <= 0) {
      r.put("burst.allReapedMs", (done - created) / 1e6);
      r.put("burst.verdictMs", (done - created) / 1e6 - GRACE_SECONDS * 1000.0);
    } else {
      r.missing("burst.allReapedMs", left + " burst files still there " + (GRACE_SECONDS + 150) + " s after the burst");
    }
    r.note("burst", "the burst's files are unheld, so each one's final verdict is leaked once it is " + GRACE_SECONDS
        + " s old, and the daemon reaps it: missed = files never reaped within grace + 150 s; allReapedMs = from the "
        + "end of the creations to the last unlink; verdictMs = allReapedMs minus the grace");
  }

  private void socket() throws Exception {
    Path sock = Path.of("/run/shmguard/advice.sock");
    if (!Files.exists(sock)) {
      r.missing("socket.p99Ms", "the daemon measured serves no advice socket (" + sock + "): the advice socket of "
          + "issue 4 is not in this build");
      return;
    }
    Bench.log("daemon: advice socket");
    SocketBench bench = new SocketBench(sock);
    String first;
    try {
      first = bench.ask();
    } catch (IOException e) {
      r.missing("socket.p99Ms", "cannot ask " + sock + ": " + e.getMessage());
      return;
    }
    if (!first.startsWith("OK v1")) {
      r.missing("socket.p99Ms", "the socket answered \"" + first + "\" to an ADVISE v1 request");
      return;
    }
    for (int i = 0; i < 500; i++) {
      bench.ask(); // warm the server's code as a running daemon's would be
    }
    r.put("socket.answersPerSecond", bench.throughput(4, 5));
    SocketBench.Rated rated = bench.atRate(1000, 10, 8);
    r.put("socket.rate.sent", rated.sent());
    r.put("socket.rate.ok", rated.ok());
    r.put("socket.rate.failed", rated.failed());
    r.put("socket.rate.achievedPerSecond", rated.achievedPerSecond());
    r.put("socket.p50Ms", rated.latency().median());
    r.put("socket.p99Ms", rated.latency().percentile(99));
    r.put("socket.maxMs", rated.latency().max());
    r.note("socket", "ADVISE v1 ranks=8, one request per connection over " + sock + "; answersPerSecond: 4 clients "
        + "back to back for 5 s; p50/p99 at 1,000 requests a second for 10 s, open loop (each latency from the "
        + "moment the request was due), 8 client threads");
  }

  private Path writeConfig(String name, boolean dryRun, String logLevel) throws IOException {
    Path file = params.out().resolve(name);
    Files.writeString(file, String.join("\n",
        "# Written by the bench: only keys that every shmguard version has.",
        "mounts:",
        "  - auto",
        "reap:",
        "  dryRun: " + dryRun,
        "  grace: " + GRACE_SECONDS + "s",
        "  # the sandbox is its own PID namespace and holds every process that can reach its tmpfs",
        "  requireHostPidNamespace: false",
        "log:",
        "  level: " + logLevel,
        "# the endpoint is served as shipped, on a free port: another daemon on this machine may hold 9477",
        "metrics:",
        "  listen: \"127.0.0.1:0\"",
        socketRate(),
        ""));
    return file;
  }

  /**
   * The socket row asks 1,000 times a second from one uid, far past the shipped per-uid request
   * rate (128 at once, 16 a second), which would refuse nearly every request: it measures the
   * server, so its rate is raised (-Dbench.socketRate=N; empty for a daemon older than the keys).
   * The flood rows (FloodBench) measure the shipped rate.
   */
  private static String socketRate() {
    String rate = System.getProperty("bench.socketRate", "100000");
    return rate.isBlank() ? "" : "advice:\n  requestBurst: " + rate + "\n  requestsPerSecond: " + rate;
  }
}
