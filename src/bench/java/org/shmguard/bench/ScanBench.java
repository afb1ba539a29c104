package org.shmguard.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.model.HolderRef;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.MountReport;

/**
 * Times one complete shmguard scan (Engine.judge: mounts, segments, holders, verdicts) with the code
 * warm, against the floor and, optionally, fuser and lsof over the same files, in rounds whose order
 * is shuffled so that load on the machine falls on all of them alike. Each is timed by wall clock
 * and by CPU time (user + system of the scanning process); the ratios use CPU time, which
 * the other work on a shared 2-core machine disturbs far less.
 */
final class ScanBench {
  /** The figures of one fixture, and what each scanner found. */
  record Figures(Timing shmguard, Stats shmguardThreadCpu, Timing floor, Timing floorFull, Timing floorFullOld, Timing fuser,
      Timing lsof, int processes, int segmentsSeen, int heldSeen, int hiddenSeen, int holderPids, int floorProcesses,
      int fuserPids, int lsofPids, FloorScanner.Pass lastFull, Timing baseline) {

    /** shmguard's median CPU time over the other's: what the ratios in results.json report. */
    double ratio(Timing other) {
      return other == null ? Double.NaN : shmguard.cpu().median() / other.cpu().median();
    }

    /** The same by wall time, which the load of a shared machine blurs more. */
    double wallRatio(Timing other) {
      return other == null ? Double.NaN : shmguard.wall().median() / other.wall().median();
    }
  }

  /** Wall and CPU time of one scanner's rounds. */
  record Timing(Stats wall, Stats cpu) {
    static Timing of(List<Long> wall, List<Long> cpu) {
      return wall.isEmpty() ? null : new Timing(Stats.ofNanos(wall), Stats.ofNanos(cpu));
    }
  }

  private int warmPasses;

  private final NativeTools tools;
  private final Config config;
  private final Random random = new Random(6);

  ScanBench(NativeTools tools, Config config) {
    this.tools = tools;
    this.config = config;
  }

  int warmPasses() {
    return warmPasses;
  }

  Figures measure(Fixture fixture, int rounds, boolean withExternal) throws IOException, InterruptedException {
    return measure(fixture, rounds, withExternal, null);
  }

  /** The same, with {@code baseline} (another build, or null) timed in the same rounds. */
  Figures measure(Fixture fixture, int rounds, boolean withExternal, Baseline baseline)
      throws IOException, InterruptedException {
    Engine engine = Engine.create(config, HostPaths.system());
    warmPasses = JitWarmup.warm(engine::judge);
    Judgement last = engine.judge();
    List<String> files = fixture.files().stream().map(n -> fixture.mount().resolve(n).toString()).toList();
    ExternalTool fuser = withExternal ? ExternalTool.fuser(tools, files) : null;
    ExternalTool lsof = withExternal ? ExternalTool.lsof(tools, fixture.mount().toString()) : null;
    // Process CPU time: the scan's own thread plus the garbage collection it causes. Nothing else in
    // this JVM runs during a round (the other scanners are other processes, and they have finished).
    List<Long> sg = new ArrayList<>();
    List<Long> sgCpu = new ArrayList<>();
    List<Long> sgThread = new ArrayList<>();
    java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
    List<Long> fl = new ArrayList<>();
    List<Long> flCpu = new ArrayList<>();
    List<Long> ff = new ArrayList<>();
    List<Long> ffCpu = new ArrayList<>();
    List<Long> fo = new ArrayList<>();
    List<Long> foCpu = new ArrayList<>();
    FloorScanner.Pass lastFull = null;
    List<Long> bl = new ArrayList<>();
    List<Long> blCpu = new ArrayList<>();
    List<Long> fu = new ArrayList<>();
    List<Long> fuCpu = new ArrayList<>();
    List<Long> ls = new ArrayList<>();
    List<Long> lsCpu = new ArrayList<>();
    Set<Integer> fuserPids = new TreeSet<>();
    Set<Integer> lsofPids = new TreeSet<>();
    int floorProcesses = 0;
    try (FloorScanner floor = new FloorScanner(tools)) {
      floor.pass();
      List<String> order = new ArrayList<>(withExternal ? List.of("shmguard", "floor", "floorFull", "floorFullOld", "fuser", "lsof")
          : List.of("shmguard", "floor", "floorFull", "floorFullOld"));
      if (baseline != null) {
        order.add("baseline");
        baseline.scan(); // its first scan warms it (30 passes), untimed
      }
      for (int r = 0; r < rounds; r++) {
        Collections.shuffle(order, random);
        for (String who : order) {
          switch (who) {
            case "shmguard" -> {
              long c = CpuClock.processNanos();
              long th = threads.getCurrentThreadCpuTime();
              long t = System.nanoTime();
              last = engine.judge();
              sg.add(System.nanoTime() - t);
              sgThread.add(threads.getCurrentThreadCpuTime() - th);
              sgCpu.add(CpuClock.processNanos() - c);
            }
            case "floor" -> {
              FloorScanner.Pass p = floor.pass();
              fl.add(p.nanos());
              flCpu.add(p.cpuNanos());
              floorProcesses = p.processes();
            }
            case "floorFull" -> {
              lastFull = floor.fullPass(fixture.mount().toString());
              ff.add(lastFull.nanos());
              ffCpu.add(lastFull.cpuNanos());
            }
            case "floorFullOld" -> {
              FloorScanner.Pass p = floor.oldFullPass(fixture.mount().toString());
              fo.add(p.nanos());
              foCpu.add(p.cpuNanos());
            }
            case "baseline" -> {
              Baseline.Run run = baseline.scan();
              bl.add(run.nanos());
              blCpu.add(run.cpuNanos());
            }
            case "fuser" -> {
              ExternalTool.Run run = fuser.run();
              fu.add(run.nanos());
              fuCpu.add(run.cpuNanos());
              fuserPids = run.pids();
            }
            default -> {
              ExternalTool.Run run = lsof.run();
              ls.add(run.nanos());
              lsCpu.add(run.cpuNanos());
              lsofPids = run.pids();
            }
          }
        }
      }
    }
    int held = 0;
    Set<Integer> pids = new TreeSet<>();
    for (Assessment a : last.segments()) {
      if (!a.holders().isEmpty()) {
        held++;
        a.holders().stream().map(HolderRef::pid).forEach(pids::add);
      }
    }
    int hidden = 0;
    for (MountReport m : last.mounts()) {
      hidden += m.hidden().size();
      m.hidden().forEach(h -> pids.addAll(h.pids()));
    }
    return new Figures(Timing.of(sg, sgCpu), Stats.ofNanos(sgThread), Timing.of(fl, flCpu), Timing.of(ff, ffCpu),
        Timing.of(fo, foCpu), Timing.of(fu, fuCpu), Timing.of(ls, lsCpu), last.snapshot().processesScanned(),
        last.segments().size(), held, hidden, pids.size(), floorProcesses, fuserPids.size(), lsofPids.size(), lastFull, Timing.of(bl, blCpu));
  }
}
