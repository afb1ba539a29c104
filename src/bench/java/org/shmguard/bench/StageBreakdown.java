package org.shmguard.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.config.Config;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountDiscovery;
import org.shmguard.host.ProcessDetails;
import org.shmguard.host.SegmentLister;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;

/**
 * Where a scan's time goes: the observe stages (mount discovery, segment listing, the /proc holder
 * pass, holder details) timed one by one in CPU time of the scanning thread, warm, median of many,
 * to point a profiler at the one that dominates.
 */
final class StageBreakdown {
  private StageBreakdown() {}

  static void measure(Results r, Config config, int rounds) {
    HostPaths paths = HostPaths.system();
    MountDiscovery discovery = new MountDiscovery(paths);
    SegmentLister lister = new SegmentLister(org.shmguard.engine.Engine.selection(config));
    HolderScanner scanner = new HolderScanner(paths);
    ProcessDetails details = new ProcessDetails(paths);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<Long> disc = new ArrayList<>();
    List<Long> list = new ArrayList<>();
    List<Long> hold = new ArrayList<>();
    List<Long> info = new ArrayList<>();
    for (int i = 0; i < rounds + 10; i++) {
      long t0 = threads.getCurrentThreadCpuTime();
      MountDiscovery.Result found = discovery.discover(config.autoDiscover(), config.mountPaths());
      long t1 = threads.getCurrentThreadCpuTime();
      Set<Dev> devs = new LinkedHashSet<>();
      for (ShmMount m : found.mounts()) {
        lister.list(m);
        devs.add(m.dev());
      }
      long t2 = threads.getCurrentThreadCpuTime();
      HolderPass pass = scanner.scan(devs);
      long t3 = threads.getCurrentThreadCpuTime();
      for (int pid : pass.index().pids()) {
        details.read(pid);
      }
      long t4 = threads.getCurrentThreadCpuTime();
      if (i >= 10) {
        disc.add(t1 - t0);
        list.add(t2 - t1);
        hold.add(t3 - t2);
        info.add(t4 - t3);
      }
    }
    r.put("scan.stagesCpuMs.discovery", Stats.ofNanos(disc).median());
    r.put("scan.stagesCpuMs.segments", Stats.ofNanos(list).median());
    r.put("scan.stagesCpuMs.holders", Stats.ofNanos(hold).median());
    r.put("scan.stagesCpuMs.holderDetails", Stats.ofNanos(info).median());
  }
}
