package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.shmguard.text.Bytes;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.MountReport;

/**
 * Space that df counts and ls does not: segments unlinked but still mapped or open, which is how a
 * live NCCL job normally holds its buffers. Reported with the processes and jobs holding them; a
 * warning when it fills the mount, a note otherwise.
 */
final class HiddenUsageCheck implements Check {
  private static final int LISTED = 10;
  static final double NEARLY_FULL = 0.9;

  @Override
  public String name() {
    return "hidden-usage";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    Snapshot snap = ctx.judgement().snapshot();
    List<Finding> out = new ArrayList<>();
    for (MountReport r : ctx.judgement().mounts()) {
      if (r.hidden().isEmpty()) {
        continue;
      }
      ShmMount m = r.mount();
      Map<String, Set<Integer>> jobs = new LinkedHashMap<>(); // job -> distinct pids
      List<String> evidence = new ArrayList<>();
      for (MountReport.Hidden h : r.hidden()) {
        List<String> who = new ArrayList<>();
        for (int pid : h.pids()) {
          ProcessInfo p = snap.processes().get(pid);
          who.add(p == null ? "pid " + pid : p.describe());
          String job = p == null ? "pid " + pid + " (gone)"
              : p.container() != null ? p.container()
              : "the host, " + (p.user() != null ? p.user() : "uid " + p.uid());
          jobs.computeIfAbsent(job, k -> new TreeSet<>()).add(pid);
        }
        if (evidence.size() < LISTED) {
          evidence.add(Bytes.human(h.bytes()) + "  " + h.path() + "  held by " + String.join(", ", who));
        }
      }
      if (r.hidden().size() > LISTED) {
        evidence.add("... and " + (r.hidden().size() - LISTED) + " more (shmguard scan lists them all)");
      }
      ShmMount.Usage u = m.usage();
      boolean full = u != null && u.usedFraction() >= NEARLY_FULL;
      if (u != null) {
        evidence.add(0, m.displayName() + ": " + Bytes.human(u.usedBytes()) + " used of " + Bytes.human(u.sizeBytes())
            + "; " + Bytes.human(r.visibleBytes()) + " in visible files, " + Bytes.human(r.hiddenBytes()) + " hidden");
      }
      StringBuilder jobList = new StringBuilder();
      jobs.forEach((job, pids) -> jobList.append(jobList.length() == 0 ? "" : "; ").append(job).append(" (").append(pids.size()).append(pids.size() == 1 ? " process)" : " processes)"));
      String summary = Bytes.human(r.hiddenBytes()) + " of " + m.displayName() + " is held by " + r.hidden().size()
          + " unlinked segment(s) still mapped (df counts it, ls does not), by " + jobList;
      List<String> fix = new ArrayList<>();
      fix.add("nothing to reap: it is freed when the holders exit; this is how a live NCCL job holds its buffers");
      if (full) {
        fix.add("the mount is " + Math.round(u.usedFraction() * 100) + "% used: if one of these jobs has hung, end it by pid;"
            + " otherwise give the mount more room (see shm-too-small)");
      }
      out.add(Finding.of("hidden-usage", full ? Severity.WARNING : Severity.INFO, m.displayName(), summary, evidence, fix));
    }
    return out;
  }
}
