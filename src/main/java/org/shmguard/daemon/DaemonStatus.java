package org.shmguard.daemon;

import org.shmguard.model.ShmMount;
import org.shmguard.text.Counts;
import org.shmguard.policy.HealthScope;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;

/**
 * What the daemon has done so far, after its latest pass: the figures behind systemd's STATUS
 * line, and what tests and the summary read.
 *
 * @param passes passes completed since start
 * @param reaped segments reaped since start
 * @param lastPassNanos how long the latest pass (observe, judge, reap with its confirming pass) took
 * @param last the latest judgement, or null before the first pass
 * @param residentBytes the daemon's resident memory after the latest pass (VmRSS), or -1 if unknown
 */
public record DaemonStatus(long passes, long reaped, long overflows, int watchedMounts, int watchedHolders,
    long lastPassNanos, Judgement last, long residentBytes) {
  /** Before the first pass. */
  static final DaemonStatus START = new DaemonStatus(0, 0, 0, 0, 0, 0, null, -1);

  /** After one more full pass, {@code report}, with the watches' figures after it and the resident memory. */
  DaemonStatus afterPass(org.shmguard.engine.PassReport report, long overflowsNow, int mountsNow, int holdersNow,
      long rss) {
    long reapedNow = report.outcomes().stream().filter(o -> o.result() == org.shmguard.remedy.ReapOutcome.Result.REAPED)
        .count();
    return new DaemonStatus(passes + 1, reaped + reapedNow, overflowsNow, mountsNow, holdersNow,
        report.took().toNanos(), report.judgement(), rss);
  }

  /** "12 passes, 3 segments reaped since start": the stop line's account. */
  String doneSoFar(boolean dryRun) {
    return Counts.of(passes, "pass") + ", " + Counts.of(reaped, "segment") + " reaped since start"
        + (dryRun ? " (dry run: nothing unlinked)" : "");
  }

  /** After an exit pass that reaped {@code n}: counted, the last full pass's figures kept. */
  DaemonStatus plusReaped(long n) {
    return n == 0 ? this : new DaemonStatus(passes, reaped + n, overflows, watchedMounts, watchedHolders, lastPassNanos,
        last, residentBytes);
  }

  /** One line for systemd's STATUS=: mounts, segments, leaked, reaped, the fullest mount. */
  public String line() {
    if (last == null) {
      return "starting";
    }
    long leaked = last.count(Verdict.LEAKED) + last.count(Verdict.FAILED_CREATION);
    StringBuilder sb = new StringBuilder().append(Counts.of(last.mounts().size(), "mount")).append(", ")
        .append(Counts.of(last.segments().size(), "segment")).append(", ").append(leaked).append(" leaked, ")
        .append(reaped).append(" reaped since start");
    ShmMount fullest = null;
    for (var r : last.mounts()) {
      var u = r.mount().usage();
      // the node's fullest: a mount that is its owner's is not the host's to report here
      if (u != null && HealthScope.of(r.mount()) == HealthScope.NODE
          && (fullest == null || u.usedFraction() > fullest.usage().usedFraction())) {
        fullest = r.mount();
      }
    }
    if (fullest != null) {
      sb.append(String.format(", fullest %s at %.0f%%", fullest.displayName(), 100 * fullest.usage().usedFraction()));
    }
    long unexamined = last.snapshot().contents().stream().mapToLong(c -> c.unexamined()).sum();
    if (unexamined > 0) {
      sb.append(", ").append(unexamined).append(" more not examined yet");
    }
    if (residentBytes > 0) {
      sb.append(", RSS ").append(residentBytes >> 20).append(" MiB");
    }
    if (!last.plan().blockers().isEmpty()) {
      sb.append("; not reaping: the /proc pass is incomplete");
    }
    return sb.toString();
  }
}
