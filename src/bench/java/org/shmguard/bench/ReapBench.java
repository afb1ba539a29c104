package org.shmguard.bench;

import java.io.IOException;
import java.io.StringReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigLoader;
import org.shmguard.engine.Engine;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.model.Dev;
import org.shmguard.policy.ReapPlan;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;

/**
 * What one reap costs: N leaked files (unheld, past a grace of 0) removed by shmguard's own
 * {@link Reaper}, warm, in this JVM, against two floors in C that remove the same number of files
 * in the same tmpfs: plain unlinkat (no check at all) and the write-lease dance (open, F_SETLEASE
 * F_WRLCK, renameat2 to a hidden name, F_GETLEASE, unlinkat, close; in batches with one settle
 * wait each, as shmguard's lease does, with its batch size and wait where the build has them). Rounds interleave the three in a shuffled order.
 *
 * <p>shmguard's figure is {@code Reaper.execute} alone, given a confirming /proc pass made just
 * before (untimed): the per-file checks, the lease where the build has it, and the unlinks. The
 * confirming pass is a cost per reaping pass, not per file; it is the holder stage of a scan
 * ({@code scan.stagesCpuMs.holders}).
 */
final class ReapBench {
  /**
   * The lease floor's batch and wait: shmguard's own (LeasedUnlink's BATCH and SETTLE_MILLIS, read
   * from the build measured) so that wall times compare, or these where the build has no lease.
   */
  private static final int DEFAULT_BATCH = 128;
  private static final long DEFAULT_SETTLE_MICROS = 1000;
  private static final int WARMUP_ROUNDS = 10;
  static final String CONFIG = String.join("\n",
      "mounts:",
      "  - auto",
      "reap:",
      "  dryRun: false",
      "  grace: 0s",
      "  # the sandbox is its own PID namespace and holds every process that can reach its tmpfs",
      "  requireHostPidNamespace: false",
      "");

  private final Random random = new Random(11);
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final List<Long> sgWall = new ArrayList<>();
  private final List<Long> sgCpu = new ArrayList<>();
  private final List<Long> sgThread = new ArrayList<>();
  private final List<Long> unWall = new ArrayList<>();
  private final List<Long> unCpu = new ArrayList<>();
  private final List<Long> leWall = new ArrayList<>();
  private final List<Long> leCpu = new ArrayList<>();
  private final List<Long> blWall = new ArrayList<>();
  private final List<Long> blCpu = new ArrayList<>();
  private final Map<String, Integer> notReaped = new TreeMap<>();
  private int batch = DEFAULT_BATCH;
  private long settleMicros = DEFAULT_SETTLE_MICROS;
  private String batchSource = "the bench's defaults: the build measured has no lease";

  private ReapBench() {}

  /** Takes the batch size and settle wait of shmguard's lease, where the build has one. */
  private void leaseConstants() {
    try {
      Class<?> c = Class.forName("org.shmguard.remedy.LeasedUnlink", false, ReapBench.class.getClassLoader());
      java.lang.reflect.Field b = c.getDeclaredField("BATCH");
      java.lang.reflect.Field w = c.getDeclaredField("SETTLE_MILLIS");
      b.setAccessible(true);
      w.setAccessible(true);
      batch = ((Number) b.get(null)).intValue();
      settleMicros = ((Number) w.get(null)).longValue() * 1000;
      batchSource = "LeasedUnlink.BATCH and SETTLE_MILLIS of the build measured";
    } catch (ReflectiveOperationException | RuntimeException e) {
      if (Bench.hasClass("org.shmguard.remedy.LeasedUnlink")) {
        batchSource = "the bench's defaults: LeasedUnlink's constants not found (" + e + ")";
      }
    }
  }

  /** Measures, with {@code baseline} (another build, or null) timed in the same rounds. */
  static void run(Results r, BenchParams params, NativeTools tools, Baseline baseline) throws Exception {
    new ReapBench().measure(r, params, tools, baseline);
  }

  private void measure(Results r, BenchParams params, NativeTools tools, Baseline baseline) throws Exception {
    int n = params.reapFiles();
    leaseConstants();
    Fixture.mountTmpfs(Bench.SHM, "1g");
    try (ReapFloor floor = new ReapFloor(tools, Bench.SHM)) {
      Config config = ConfigLoader.parse(new StringReader(CONFIG), "the bench's reap configuration");
      Engine engine = Engine.create(config, HostPaths.system());
      HolderScanner scanner = new HolderScanner(HostPaths.system());
      List<String> order = new ArrayList<>(List.of("shmguard", "unlink", "lease"));
      if (baseline != null) {
        order.add("baseline");
      }
      for (int round = 0; round < WARMUP_ROUNDS + params.rounds(); round++) {
        boolean timed = round >= WARMUP_ROUNDS;
        Collections.shuffle(order, random);
        for (String who : order) {
          floor.make(n);
          switch (who) {
            case "shmguard" -> shmguardRound(engine, scanner, n, timed);
            case "unlink" -> add(floor.unlink(), n, unWall, unCpu, timed, "unlink floor");
            case "baseline" -> baselineRound(baseline, n, timed);
            default -> add(floor.lease(batch, settleMicros), n, leWall, leCpu, timed, "lease floor");
          }
        }
      }
    } finally {
      Fixture.unmount(Bench.SHM);
    }
    put(r, n);
  }

  private void shmguardRound(Engine engine, HolderScanner scanner, int n, boolean timed) throws Exception {
    Thread.sleep(20); // the files' ctime safely behind the judge's clock: grace 0 makes them leaked
    ReapPlan plan = engine.judge().plan();
    if (plan.candidates().size() != n) {
      throw new IOException("the reap bench expected " + n + " leaked files in the plan, found "
          + plan.candidates().size() + (plan.blockers().isEmpty() ? "" : "; blockers: " + plan.blockers()));
    }
    Set<Dev> devs = plan.candidates().stream().map(a -> a.segment().mountDev()).collect(Collectors.toSet());
    HolderPass confirm = scanner.scan(devs);
    Reaper reaper = new Reaper(d -> confirm);
    long c = CpuClock.processNanos();
    long th = threads.getCurrentThreadCpuTime();
    long t = System.nanoTime();
    List<ReapOutcome> done = reaper.execute(plan, false);
    long wall = System.nanoTime() - t;
    long thread = threads.getCurrentThreadCpuTime() - th;
    long cpu = CpuClock.processNanos() - c;
    for (ReapOutcome o : done) {
      if (o.result() != ReapOutcome.Result.REAPED) {
        notReaped.merge(o.result() + ": " + o.detail(), 1, Integer::sum);
      }
    }
    if (timed) {
      sgWall.add(wall / n);
      sgCpu.add(cpu / n);
      sgThread.add(thread / n);
    }
  }

  private void baselineRound(Baseline baseline, int n, boolean timed) throws Exception {
    Thread.sleep(20); // as for this build: the files' ctime behind the judge's clock
    Baseline.Run run = baseline.reap();
    if (run.candidates() != n || run.reaped() != n) {
      throw new IOException("the baseline build reaped " + run.reaped() + " of " + run.candidates() + " leaked files, "
          + "expected " + n);
    }
    if (timed) {
      blWall.add(run.nanos() / n);
      blCpu.add(run.cpuNanos() / n);
    }
  }

  private static void add(ReapFloor.Run run, int n, List<Long> wall, List<Long> cpu, boolean timed, String who)
      throws IOException {
    if (run.done() != n) {
      throw new IOException(who + " removed " + run.done() + " of " + n + " files" + (who.startsWith("lease")
          ? " (a write lease needs fs.leases-enable=1 and, on another user's file, CAP_LEASE)" : ""));
    }
    if (timed) {
      wall.add(run.nanos() / n);
      cpu.add(run.cpuNanos() / n);
    }
  }

  private void put(Results r, int n) {
    r.put("reap.files", n);
    r.put("reap.rounds", sgCpu.size());
    r.put("reap.shmguardTakesLease", Bench.hasClass("org.shmguard.remedy.LeasedUnlink"));
    r.put("reap.leaseBatch", batch);
    r.put("reap.leaseSettleUs", settleMicros);
    Stats sg = micros(sgCpu);
    Stats un = micros(unCpu);
    Stats le = micros(leCpu);
    putMicros(r, "reap.shmguard.cpuUs", sg);
    putMicros(r, "reap.shmguard.wallUs", micros(sgWall));
    r.put("reap.shmguard.threadCpuUs.median", micros(sgThread).median());
    putMicros(r, "reap.floorUnlink.cpuUs", un);
    putMicros(r, "reap.floorUnlink.wallUs", micros(unWall));
    putMicros(r, "reap.floorLease.cpuUs", le);
    putMicros(r, "reap.floorLease.wallUs", micros(leWall));
    r.put("reap.leaseCostCpuUs", le.median() - un.median());
    r.put("reap.shmguardOverLeaseCpuUs", sg.median() - le.median());
    r.put("reap.ratioFloorUnlink", sg.median() / un.median());
    r.put("reap.ratioFloorLease", sg.median() / le.median());
    if (!blCpu.isEmpty()) {
      Stats bl = micros(blCpu);
      putMicros(r, "reap.baseline.cpuUs", bl);
      putMicros(r, "reap.baseline.wallUs", micros(blWall));
      r.put("reap.safetyChecksShmguardCpuUs", sg.median() - bl.median());
      r.note("reap.baseline", "the Reaper of the build -Dbench.baselineJar=" + System.getProperty("bench.baselineJar")
          + ", in a JVM of its own, same rounds, same measure; safetyChecksShmguardCpuUs = this build - the baseline");
    }
    r.put("reap.notReaped", notReaped.values().stream().mapToInt(Integer::intValue).sum());
    if (!notReaped.isEmpty()) {
      r.note("reap.notReaped", "files shmguard's Reaper did not reap, by outcome: " + notReaped);
    }
    r.note("reap", String.format(java.util.Locale.ROOT, "per file, median of %d rounds of %d leaked files (4 KiB "
        + "each, unheld, grace 0) in a tmpfs of their own, after %d warm-up rounds; CPU time (user + system) of the "
        + "remover: shmguard = Reaper.execute in this warm JVM (process CPU, GC included), given a confirming /proc "
        + "pass made just before and not timed (a per-pass cost: scan.stagesCpuMs.holders); floorUnlink = unlinkat "
        + "only; floorLease = open O_RDONLY|O_NOFOLLOW|O_NONBLOCK, F_SETLEASE F_WRLCK, renameat2 RENAME_NOREPLACE "
        + "to a hidden name, F_GETLEASE, unlinkat, close, %d files a batch with one %d us wait each (%s; so wall "
        + "time holds about %.0f us a file of sleep, CPU time none); leaseCostCpuUs = floorLease - floorUnlink, "
        + "shmguardOverLeaseCpuUs = shmguard - floorLease; shmguardTakesLease says whether the build measured reaps "
        + "through the write lease (issue 11)", sgCpu.size(), n, WARMUP_ROUNDS, batch, settleMicros, batchSource,
        (double) settleMicros / batch));
  }

  private static Stats micros(List<Long> nanos) {
    return new Stats(nanos.stream().mapToDouble(x -> x / 1e3).toArray());
  }

  private static void putMicros(Results r, String key, Stats s) {
    r.put(key + ".median", s.median());
    r.put(key + ".p10", s.percentile(10));
    r.put(key + ".p90", s.percentile(90));
  }
}
