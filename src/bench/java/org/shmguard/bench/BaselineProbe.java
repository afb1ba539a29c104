package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
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
 * Another build's scan and reap, timed the same way as this build's, for one run to show what a
 * change costs: the bench starts this class in a JVM of its own whose classpath puts that build's
 * jar ({@code -Dbench.baselineJar}) before the bench's classes, so every shmguard class is the other
 * build's. It uses only entry points that every shmguard since issue 6 has (Engine, Reaper,
 * HolderScanner, ConfigLoader). One command a line on stdin, one answer a line on stdout:
 *
 * <pre>
 *   scan   one Engine.judge() (warmed by 30 passes the first time): "WALL_NANOS CPU_NANOS"
 *   reap   judge with grace 0, a confirming pass (untimed), then Reaper.execute on every leaked
 *          file: "WALL_NANOS CPU_NANOS REAPED CANDIDATES" (process CPU time, as the bench's own)
 * </pre>
 */
public final class BaselineProbe {
  private BaselineProbe() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
        StandardCharsets.US_ASCII);
    System.setOut(System.err); // nothing but answers on stdout
    HostPaths paths = HostPaths.system();
    Engine scanEngine = null;
    Engine reapEngine = null;
    HolderScanner scanner = new HolderScanner(paths);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.equals("scan")) {
        if (scanEngine == null) {
          scanEngine = Engine.create(ConfigLoader.defaults(), paths);
          Engine warming = scanEngine;
          JitWarmup.warm(warming::judge); // the same warm-up as this build's scan
        }
        long c = CpuClock.processNanos();
        long t = System.nanoTime();
        scanEngine.judge();
        out.println((System.nanoTime() - t) + " " + (CpuClock.processNanos() - c));
      } else if (line.equals("reap")) {
        if (reapEngine == null) {
          reapEngine = Engine.create(ConfigLoader.parse(new StringReader(ReapBench.CONFIG), "reap probe"), paths);
        }
        ReapPlan plan = reapEngine.judge().plan();
        Set<Dev> devs = plan.candidates().stream().map(a -> a.segment().mountDev()).collect(Collectors.toSet());
        HolderPass confirm = scanner.scan(devs);
        Reaper reaper = new Reaper(d -> confirm);
        long c = CpuClock.processNanos();
        long t = System.nanoTime();
        List<ReapOutcome> done = reaper.execute(plan, false);
        long wall = System.nanoTime() - t;
        long cpu = CpuClock.processNanos() - c;
        long reaped = done.stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).count();
        out.println(wall + " " + cpu + " " + reaped + " " + plan.candidates().size());
      } else {
        out.println("unknown command " + line);
      }
    }
  }
}
