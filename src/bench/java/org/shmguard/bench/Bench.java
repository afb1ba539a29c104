package org.shmguard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigLoader;

/**
 * The benchmark harness, run by {@code mvn -Pbench verify} inside the test sandbox (own PID and
 * mount namespace): compiles its C helpers, builds fixtures on a private tmpfs mounted over the
 * sandbox's /dev/shm, measures the scan against the floor, fuser and lsof, the scaling grid and the
 * daemon, then prints a table and writes target/bench/results.json.
 */
public final class Bench {
  static final Path SHM = Path.of("/dev/shm");

  private Bench() {}

  /** One part of the bench with a class of its own: it puts its figures, notes and targets in the results. */
  @FunctionalInterface
  interface PartRun {
    void run(Results r, BenchParams params, NativeTools tools) throws Exception;
  }

  /**
   * A part that runs when {@code -D<property>} is true ({@code byDefault} when not given or empty),
   * after the daemon's rows and before the flood; its rows for the footprint table go in
   * {@link #FOOTPRINT_ROWS}. The bench profile in pom.xml passes each property on ({@code <argument>}).
   */
  record Part(String property, boolean byDefault, PartRun run) {}

  /** The parts registered here, in the order they run: add a line to add one. */
  static final List<Part> PARTS = List.of();

  public static void main(String[] args) throws Exception {
    if (System.getenv("SHMGUARD_SANDBOX") == null) {
      System.err.println("the bench must run in the sandbox, as root: use mvn -Pbench verify");
      System.exit(2);
    }
    BenchParams params = BenchParams.fromSystemProperties();
    NativeTools tools = NativeTools.build(params.basedir(), params.out());
    Results results = new Results();
    results.put("machine.cores", Runtime.getRuntime().availableProcessors());
    results.put("machine.kernel", System.getProperty("os.version"));
    results.put("machine.java", System.getProperty("java.vm.version"));
    results.put("date", Instant.now().toString());
    results.note("processes", "the bench runs in its own PID namespace: every scanner (shmguard, floor, fuser, lsof) "
        + "sees only the sandbox's processes (the fixture's holders, the bench JVM, the daemon), the same ones");
    Config config = ConfigLoader.defaults();
    ScanBench scan = new ScanBench(tools, config);

    // -Dbench.baselineJar: another build, timed in the same rounds as this one (the cost of a change)
    Baseline baseline = Baseline.start(params);
    try {
      if (params.scan()) {
        log("scan: %d processes, %d segments, %d rounds", params.processes(), params.segments(), params.rounds());
        try (Fixture f = Fixture.create(tools, SHM, params.processes(), params.segments(), params.threadedEvery())) {
          ScanBench.Figures fig = scan.measure(f, params.rounds(), true, baseline);
          putScan(results, fig);
          results.put("scan.warmPasses", scan.warmPasses());
          results.note("scan.warmPasses", "untimed passes before the rounds: at least 30, then until 10 in a row add "
              + "under 20 ms of JIT compilation (at most " + JitWarmup.MAX_PASSES + "), so the compiler threads are "
              + "not in the process CPU time of the rounds");
          StageBreakdown.measure(results, config, params.rounds());
          cliScan(results, params);
        }
      } else {
        for (String k : List.of("scan.ratioFuser", "scan.ratioLsof", "scan.ratioFloor")) {
          results.missing(k, "scan comparison skipped (-Dbench.scan=false)");
        }
      }
      if (params.reap()) {
        log("reap: %d leaked files a round, %d rounds", params.reapFiles(), params.rounds());
        ReapBench.run(results, params, tools, baseline);
      }
    } finally {
      if (baseline != null) {
        baseline.close();
      }
    }
    if (params.scaling()) {
      scaling(results, tools, scan, params.threadedEvery());
    }
    if (params.daemon()) {
      DaemonBench.run(results, params, tools);
    } else {
      for (String k : List.of("reapDelayMs.p50", "reapDelayMs.p99", "idle.rssMiB", "idle.cpuPercent",
          "startToReadyMs", "burst.missed", "socket.p99Ms")) {
        results.missing(k, "daemon measurements skipped (-Dbench.daemon=false)");
      }
    }
    // The large row (2,000 processes) and the crowded mount run with the daemon's rows by default;
    // -Dbench.daemon=false -Dbench.large=2000 (or -Dbench.crowded=true) runs one of them alone.
    String largeGiven = System.getProperty("bench.large", "");
    int large = largeGiven.isBlank() ? (params.daemon() ? 2000 : 0) : Integer.parseInt(largeGiven.trim());
    if (large > 0) {
      DaemonBench.large(results, params, tools, scan, large); // the scaling table's large row
    } else {
      results.missing("scaling.p2000_s8000.reapDelayMs.p99", "the large row skipped (-Dbench.large=0)");
    }
    String crowded = System.getProperty("bench.crowded", "");
    if (crowded.isBlank() ? params.daemon() : Boolean.parseBoolean(crowded.trim())) {
      CrowdedBench.run(results, params, tools); // issue 12: memory among a million files
    }
    for (Part part : PARTS) {
      String on = System.getProperty(part.property(), "");
      if (on.isBlank() ? part.byDefault() : Boolean.parseBoolean(on.trim())) {
        part.run().run(results, params, tools);
      }
    }
    if (Boolean.parseBoolean(System.getProperty("bench.flood", "true"))) {
      FloodBench.run(results, params, tools); // issue 20: one user's request flood on the advice socket
    }
    RestartLoopBench.run(results, params, tools); // issue 21: a crashed engine restarted on its pod's /dev/shm
    // issue 20: memory beside many users' namespaces; -Dbench.userNamespaces=0 skips it. With the
    // other sections off (-Dbench.scan=false -Dbench.scaling=false -Dbench.reap=false -Dbench.daemon=false
    // -Dbench.flood=false) it runs alone.
    int userNamespaces = Integer.getInteger("bench.userNamespaces", 1000);
    if (userNamespaces > 0) {
      UserNamespacesBench.run(results, params, tools, userNamespaces, Integer.getInteger("bench.userNamespaceFiles", 20_000));
    } else {
      results.missing("userNamespaces.rssMiB", "skipped (-Dbench.userNamespaces=0)");
    }
    targets(results);
    footprintTable(results);
    results.write(params.out().resolve("results.json"));
    results.print(System.out);
    printFootprintTable(results, System.out);
    System.out.println("\nwritten: " + params.out().resolve("results.json"));
  }

  private static void putScan(Results r, ScanBench.Figures f) {
    r.put("scan.processes", f.processes());
    r.put("scan.segmentsListed", f.segmentsSeen());
    r.put("scan.segmentsHeld", f.heldSeen());
    r.put("scan.hiddenSegments", f.hiddenSeen());
    r.put("scan.holderPids", f.holderPids());
    r.put("scan.fuserPids", f.fuserPids());
    r.put("scan.lsofPids", f.lsofPids());
    r.put("scan.rounds", f.shmguard().wall().count());
    putTiming(r, "scan.shmguard", f.shmguard());
    r.put("scan.shmguard.threadCpuMs.median", f.shmguardThreadCpu().median());
    putTiming(r, "scan.floor", f.floor());
    putTiming(r, "scan.floorFull", f.floorFull());
    putTiming(r, "scan.fuser", f.fuser());
    putTiming(r, "scan.lsof", f.lsof());
    r.put("scan.ratioFuser", f.ratio(f.fuser()));
    r.put("scan.ratioLsof", f.ratio(f.lsof()));
    r.put("scan.ratioFloor", f.ratio(f.floor()));
    r.put("scan.ratioFloorFull", f.ratio(f.floorFull()));
    r.put("scan.wallRatioFuser", f.wallRatio(f.fuser()));
    r.put("scan.wallRatioLsof", f.wallRatio(f.lsof()));
    r.put("scan.wallRatioFloor", f.wallRatio(f.floor()));
    r.note("scan.ratioFloor", "ratios are of median CPU time (user + system); scan.wallRatio* are of median wall time");
    r.note("scan.shmguard", "Engine.judge() in one warm JVM: mount discovery, segment listing, one /proc pass, "
        + "holder details, verdicts; nothing reaped");
    r.note("scan.floor", "procfloor: read every /proc/PID/maps and list every /proc/PID/fd, timed inside the process");
    putSafetyChecks(r, f);
    r.note("scan.fuser", "fuser FILE... over every segment file, whole process; lsof -n -P -w +f -- /dev/shm likewise");
  }

  /**
   * What issue 11's holder checks cost a pass: the kernel work of a complete scan that keeps them
   * (floorFull) against the one before them (floorFullOld), and shmguard's warm scan against both.
   */
  private static void putSafetyChecks(Results r, ScanBench.Figures f) {
    putTiming(r, "scan.floorFullOld", f.floorFullOld());
    r.put("scan.floorFull.threadTables", f.lastFull().threadTables());
    r.put("scan.floorFull.fdinfos", f.lastFull().fdinfos());
    r.put("scan.ratioFloorFullOld", f.ratio(f.floorFullOld()));
    double cost = f.floorFull().cpu().median() - f.floorFullOld().cpu().median();
    r.put("scan.safetyChecksCpuMs", cost);
    r.put("scan.shmguardReadsThreadTables", hasClass("org.shmguard.host.ProcessReader"));
    if (f.baseline() != null) {
      putTiming(r, "scan.baseline", f.baseline());
      r.put("scan.baseline.ratioFloorFullOld", f.baseline().cpu().median() / f.floorFullOld().cpu().median());
      r.put("scan.safetyChecksShmguardCpuMs", f.shmguard().cpu().median() - f.baseline().cpu().median());
      r.note("scan.baseline", "the warm scan (Engine.judge) of the build -Dbench.baselineJar=" + System.getProperty(
          "bench.baselineJar") + ", in a JVM of its own, timed in the same shuffled rounds; "
          + "safetyChecksShmguardCpuMs = this build's scan - the baseline's (CPU medians)");
    } else {
      r.missing("scan.safetyChecksShmguardCpuMs", "no -Dbench.baselineJar: this build's scan alone (give the jar of "
          + "the build before a change to time both in the same rounds)");
    }
    r.note("scan.floorFull", "procfloor \"full\": the kernel work of a complete scan that keeps issue 11's holder "
        + "rules, parsing only fdinfo's mnt_id: per process a statx of /proc/PID/task (thread count) and its maps; per "
        + "fd table a readlink of each fd, and for each that is not a socket, pipe or anon inode a read of its fdinfo "
        + "(mnt_id, ino), a statx through the link only for fds on the watched mount; for a process with several "
        + "threads a listing of /proc/PID/task and a kcmp(KCMP_FILES) per thread, reading /proc/PID/task/TID/fd where "
        + "the table is another; a readlink of every ns/mnt, a read of every /proc/PID/stat, an lstat of every file in "
        + "the mount, one mountinfo read. ratioFloorFull = shmguard / floorFull is shmguard's own overhead. The "
        + "fixture gives every bench.threadedEvery-th holder (4 by default) 3 threads, one with its own fd table "
        + "(threadTables: such tables read in the last pass)");
    r.note("scan.floorFullOld", "procfloor \"old\": the kernel work of a complete scan before issue 11 (the "
        + "scan.floorFull of earlier runs): the floor plus a stat through every fd of each leader's table, a readlink "
        + "of every ns/mnt, a read of every /proc/PID/stat, an lstat of every file in the mount");
    r.note("scan.safetyChecksCpuMs", String.format(java.util.Locale.ROOT, "the kernel work issue 11's checks add to "
        + "a pass, floorFull - floorFullOld: %.1f ms of %.1f ms (CPU medians); shmguard's warm scan, %.1f ms, is "
        + "%.2f x floorFull and %.2f x floorFullOld; shmguardReadsThreadTables says whether the build measured has "
        + "those checks", cost, f.floorFull().cpu().median(), f.shmguard().cpu().median(), f.ratio(f.floorFull()),
        f.ratio(f.floorFullOld())));
  }

  /** Whether this build of shmguard has a class: tells which code the figures are of. */
  static boolean hasClass(String name) {
    try {
      Class.forName(name, false, Bench.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  private static void putTiming(Results r, String key, ScanBench.Timing t) {
    putStats(r, key + ".wallMs", t.wall());
    putStats(r, key + ".cpuMs", t.cpu());
  }

  static void putStats(Results r, String key, Stats s) {
    r.put(key + ".median", s.median());
    r.put(key + ".p10", s.percentile(10));
    r.put(key + ".p90", s.percentile(90));
    r.put(key + ".min", s.min());
    r.put(key + ".max", s.max());
  }

  /** One `shmguard scan --json` as a user runs it: a whole JVM, cold; through the packages' launcher and plain java. */
  private static void cliScan(Results r, BenchParams params) throws IOException, InterruptedException {
    Launch shipped = Launch.shipped(params.basedir(), params.jar(), params.out().resolve("shipped"),
        System.getProperty("bench.daemonJvmArgs", "").trim());
    cliScan(r, "scanCli.", shipped);
    cliScan(r, "scanCli.default.", Launch.plain(params.jar(), List.of()));
    r.note("scanCli.medianMs", shipped.shown() + " scan --json (the packages' launcher and its archive), whole cold "
        + "process, median of 5; scanCli.default.*: java -jar with the JVM's default options");
  }

  private static void cliScan(Results r, String prefix, Launch launch) throws IOException, InterruptedException {
    List<Long> times = new ArrayList<>();
    int processes = -1;
    for (int i = 0; i < 5; i++) {
      List<String> cmd = new ArrayList<>(launch.command());
      cmd.addAll(List.of("scan", "--json"));
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
      pb.environment().putAll(launch.env());
      long t = System.nanoTime();
      Process p = pb.start();
      byte[] out = p.getInputStream().readAllBytes();
      int rc = p.waitFor();
      times.add(System.nanoTime() - t);
      if (rc != 0) {
        throw new IOException(launch.shown() + " scan --json exited " + rc);
      }
      JsonNode json = new ObjectMapper().readTree(out);
      processes = json.path("pass").path("processes").asInt(-1);
    }
    Stats s = Stats.ofNanos(times);
    r.put(prefix + "medianMs", s.median());
    r.put(prefix + "maxMs", s.max());
    r.put(prefix + "processes", processes);
  }

  private static void scaling(Results r, NativeTools tools, ScanBench scan, int threadedEvery) throws Exception {
    int[] procs = {100, 400, 1600};
    int[] segs = {1000, 4000, 16000};
    double[][] ms = new double[3][3];
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        log("scaling: %d processes, %d segments", procs[i], segs[j]);
        try (Fixture f = Fixture.create(tools, SHM, procs[i], segs[j], threadedEvery)) {
          ScanBench.Figures fig = scan.measure(f, 11, false);
          ms[i][j] = fig.shmguard().cpu().median();
          String key = "scaling.p" + procs[i] + "_s" + segs[j];
          r.put(key + ".shmguardCpuMs", fig.shmguard().cpu().median());
          r.put(key + ".floorCpuMs", fig.floor().cpu().median());
          r.put(key + ".floorFullCpuMs", fig.floorFull().cpu().median());
          r.put(key + ".floorFullOldCpuMs", fig.floorFullOld().cpu().median());
          r.put(key + ".shmguardWallMs", fig.shmguard().wall().median());
          r.put(key + ".ratioFloor", fig.ratio(fig.floor()));
        }
      }
    }
    // Additive cost a + b*P + c*S has no interaction: cost(hi,hi) - cost(hi,lo) - cost(lo,hi) + cost(lo,lo) = 0.
    // A product term P*S would make this a large share of the largest cell.
    double interaction = ms[2][2] - ms[2][0] - ms[0][2] + ms[0][0];
    r.put("scaling.interactionShare", interaction / ms[2][2]);
    r.put("scaling.growth", ms[2][2] / ms[0][0]);
    r.note("scaling.growth", "t(1600,16000) / t(100,1000); processes + segments grow 16.1 times there, "
        + "processes x segments 256 times");
    r.put("scaling.perProcessUs", (ms[2][1] - ms[0][1]) / 1500.0 * 1000.0);
    r.put("scaling.perSegmentUs", (ms[1][2] - ms[1][0]) / 15000.0 * 1000.0);
    r.note("scaling.interactionShare", "(t(1600,16000) - t(1600,1000) - t(100,16000) + t(100,1000)) / t(1600,16000): "
        + "0 when the cost is a sum of a per-process and a per-segment part, near 1 when it grows with their product");
  }

  /** The figures of the footprint table (docs/performance.md), as ratios where the target is one. */
  private static void footprintTable(Results r) {
    Object cli = r.get("scanCli.medianMs");
    Object lsof = r.get("scan.lsof.wallMs.median");
    if (cli instanceof Number c && lsof instanceof Number l && l.doubleValue() > 0) {
      r.put("scanCli.ratioLsof", c.doubleValue() / l.doubleValue());
      r.note("scanCli.ratioLsof", "cold shmguard scan --json through the launcher (scanCli.medianMs) / lsof -n -P -w +f -- "
          + "/dev/shm on the same fixture (scan.lsof.wallMs.median, whole process)");
    } else {
      r.missing("scanCli.ratioLsof", "needs the scan comparison (-Dbench.scan=true)");
    }
  }

  /**
   * A row of the footprint table: a figure against its target. {@code limit} null: reported only.
   *
   * @param strict whether the limit itself misses ("< 50"), else it meets ("<= 100")
   */
  record Row(String what, String key, Double limit, boolean strict) {
    static Row atMost(String what, String key, double limit) {
      return new Row(what, key, limit, false);
    }

    static Row below(String what, String key, double limit) {
      return new Row(what, key, limit, true);
    }

    static Row reported(String what, String key) {
      return new Row(what, key, null, false);
    }

    String target() {
      return limit == null ? "" : (strict ? "< " : "<= ") + new java.text.DecimalFormat("0.##").format(limit);
    }

    /** "yes", "no", or "" where nothing is measured or no target set. */
    String met(Object value) {
      if (limit == null || !(value instanceof Number n)) {
        return "";
      }
      double v = n.doubleValue();
      return (strict ? v < limit : v <= limit) ? "yes" : "no";
    }
  }

  /** Issue 23's table (every row of it, the 2,000-process rows included), the flood, and what the safety checks cost. */
  static final List<Row> FOOTPRINT_ROWS = new ArrayList<>(List.of(
      Row.atMost("idle RSS as shipped, 400 holders watched (MiB)", "idle.rssMiB", 40),
      Row.reported("idle RSS, default JVM options (MiB)", "default.idle.rssMiB"),
      Row.atMost("start to READY=1 as shipped, 400 holders (ms)", "startToReadyMs", 300),
      Row.reported("start to READY=1, default JVM options (ms)", "default.startToReadyMs"),
      Row.atMost("idle CPU, 400 holders, % of a core", "idle.cpuPercent", 0.05),
      Row.atMost("warm scan CPU / floorFull", "scan.ratioFloorFull", 1.2),
      Row.below("SIGKILL to unlink p50, 400 holders (ms)", "reapDelayMs.p50", 50),
      Row.atMost("SIGKILL to unlink p99, 400 holders (ms)", "reapDelayMs.p99", 100),
      Row.atMost("SIGKILL to unlink p50, 2,000 processes, 8,000 segments (ms)", "scaling.p2000_s8000.reapDelayMs.p50", 50),
      Row.atMost("SIGKILL to unlink p99, 2,000 processes, 8,000 segments (ms)", "scaling.p2000_s8000.reapDelayMs.p99", 100),
      Row.atMost("start to READY=1, 2,000 processes (ms)", "scaling.p2000_s8000.startToReadyMs", 1000),
      Row.atMost("1,000,000 files in one mount: RSS (MiB)", "crowded.rssMiB", 96),
      Row.atMost("flood by one uid on its 4 connections: daemon CPU %", "flood.4conns.cpuPercent", 5),
      Row.reported("warm scan CPU, 2,000 holders (ms)", "scaling.p2000_s8000.shmguardCpuMs"),
      Row.reported("cold scan --json (ms)", "scanCli.medianMs"),
      Row.atMost("cold scan --json / lsof /dev/shm", "scanCli.ratioLsof", 1),
      Row.reported("safety checks per pass: floorFull - floorFullOld (ms CPU)", "scan.safetyChecksCpuMs"),
      Row.reported("safety checks per reap: the lease over a plain unlink (us CPU)", "reap.leaseCostCpuUs"),
      Row.reported("shmguard's reap per file, lease and re-checks (us CPU)", "reap.shmguard.cpuUs.median")));

  private static void printFootprintTable(Results r, java.io.PrintStream out) {
    out.println();
    out.println("footprint, start, reap after an exit, and the safety checks' cost (this run)");
    out.printf(java.util.Locale.ROOT, "  %-62s %-12s %-8s %-4s %s%n", "figure", "value", "target", "met", "key");
    for (Row row : FOOTPRINT_ROWS) {
      Object v = r.get(row.key());
      String shown = v instanceof Number n ? String.format(java.util.Locale.ROOT, "%.2f", n.doubleValue())
          : v == null ? "not measured" : v.toString();
      out.printf(java.util.Locale.ROOT, "  %-62s %-12s %-8s %-4s (%s)%n", row.what(), shown, row.target(), row.met(v),
          row.key());
    }
  }

  private static void targets(Results r) {
    r.target("scan.ratioFloor", 1.2, true, "<= 1.2 x floor");
    r.target("scan.ratioFuser", 0.15, true, "~0.15 of fuser (follows)");
    r.target("scan.ratioLsof", 0.3, true, "~0.3 of lsof (follows)");
    r.target("scaling.interactionShare", 0.25, true, "linear: no P x S term");
    r.target("burst.missed", 0, true, "0");
    r.target("socket.p99Ms", 5, true, "< 5 ms");
    r.target("scanCliDaemon.ratioLsof", 1.0, true, "<= 1 x lsof /dev/shm");
    for (Row row : FOOTPRINT_ROWS) {
      if (row.limit() != null && !row.key().startsWith("flood.")) { // FloodBench sets its own
        r.target(row.key(), row.strict() ? Math.nextDown(row.limit()) : row.limit(), true, row.target());
      }
    }
  }

  static void log(String fmt, Object... args) {
    System.out.printf("[bench %tT] %s%n", System.currentTimeMillis(), String.format(fmt, args));
  }
}
