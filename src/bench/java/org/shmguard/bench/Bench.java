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

    if (params.scan()) {
      log("scan: %d processes, %d segments, %d rounds", params.processes(), params.segments(), params.rounds());
      try (Fixture f = Fixture.create(tools, SHM, params.processes(), params.segments())) {
        ScanBench.Figures fig = scan.measure(f, params.rounds(), true);
        putScan(results, fig);
        StageBreakdown.measure(results, config, params.rounds());
        cliScan(results, params);
      }
    } else {
      for (String k : List.of("scan.ratioFuser", "scan.ratioLsof", "scan.ratioFloor")) {
        results.missing(k, "scan comparison skipped (-Dbench.scan=false)");
      }
    }
    if (params.scaling()) {
      scaling(results, tools, scan);
    }
    if (params.daemon()) {
      DaemonBench.run(results, params, tools);
    } else {
      for (String k : List.of("reapDelayMs.p50", "reapDelayMs.p99", "idle.rssMiB", "idle.cpuPercent",
          "startToReadyMs", "burst.missed", "socket.p99Ms")) {
        results.missing(k, "daemon measurements skipped (-Dbench.daemon=false)");
      }
    }
    targets(results);
    results.write(params.out().resolve("results.json"));
    results.print(System.out);
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
    r.note("scan.floorFull", "procfloor \"full\": the kernel work of a whole shmguard scan without parsing: the floor "
        + "plus a readlink of every fd and its fdinfo where it is a path, a statx of every /proc/PID/task and a kcmp per "
        + "thread of a multi-threaded process, a readlink of every ns/mnt, a read of every /proc/PID/stat, an lstat of "
        + "every file in the mount; ratioFloorFull = shmguard / floorFull shows shmguard's own overhead");
    r.note("scan.fuser", "fuser FILE... over every segment file, whole process; lsof -n -P -w +f -- /dev/shm likewise");
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

  /** One `shmguard scan` as a user runs it: a whole JVM, cold. */
  private static void cliScan(Results r, BenchParams params) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<Long> times = new ArrayList<>();
    int processes = -1;
    for (int i = 0; i < 5; i++) {
      long t = System.nanoTime();
      Process p = new ProcessBuilder(java, "-jar", params.jar().toString(), "scan", "--json")
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      byte[] out = p.getInputStream().readAllBytes();
      int rc = p.waitFor();
      times.add(System.nanoTime() - t);
      if (rc != 0) {
        throw new IOException("shmguard scan --json exited " + rc);
      }
      JsonNode json = new ObjectMapper().readTree(out);
      processes = json.path("pass").path("processes").asInt(-1);
    }
    Stats s = Stats.ofNanos(times);
    r.put("scanCli.medianMs", s.median());
    r.put("scanCli.maxMs", s.max());
    r.put("scanCli.processes", processes);
    r.note("scanCli.medianMs", "java -jar target/shmguard.jar scan --json, whole cold process, median of 5");
  }

  private static void scaling(Results r, NativeTools tools, ScanBench scan) throws Exception {
    int[] procs = {100, 400, 1600};
    int[] segs = {1000, 4000, 16000};
    double[][] ms = new double[3][3];
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        log("scaling: %d processes, %d segments", procs[i], segs[j]);
        try (Fixture f = Fixture.create(tools, SHM, procs[i], segs[j])) {
          ScanBench.Figures fig = scan.measure(f, 11, false);
          ms[i][j] = fig.shmguard().cpu().median();
          String key = "scaling.p" + procs[i] + "_s" + segs[j];
          r.put(key + ".shmguardCpuMs", fig.shmguard().cpu().median());
          r.put(key + ".floorCpuMs", fig.floor().cpu().median());
          r.put(key + ".floorFullCpuMs", fig.floorFull().cpu().median());
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

  private static void targets(Results r) {
    r.target("scan.ratioFloor", 1.2, true, "<= 1.2 x floor");
    r.target("scan.ratioFuser", 0.15, true, "~0.15 of fuser (follows)");
    r.target("scan.ratioLsof", 0.3, true, "~0.3 of lsof (follows)");
    r.target("scaling.interactionShare", 0.25, true, "linear: no P x S term");
    r.target("reapDelayMs.p50", 50, true, "< 50 ms");
    r.target("reapDelayMs.p99", 250, true, "< 250 ms");
    r.target("idle.rssMiB", 48, true, "<= 48 MiB");
    r.target("idle.cpuPercent", 0.05, true, "< 0.05 % of a core");
    r.target("startToReadyMs", 400, true, "< 400 ms");
    r.target("burst.missed", 0, true, "0");
    r.target("socket.p99Ms", 5, true, "< 5 ms");
  }

  static void log(String fmt, Object... args) {
    System.out.printf("[bench %tT] %s%n", System.currentTimeMillis(), String.format(fmt, args));
  }
}
