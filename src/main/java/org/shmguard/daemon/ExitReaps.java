package org.shmguard.daemon;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.shmguard.engine.Output;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.host.ProcessExits;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.Action;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.ExitVerdict;
import org.shmguard.policy.JobEvidence;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.OutcomeAlerts;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.remedy.HolderConfirmer;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exit path: when holders' pidfds fire, reaps the files the last full pass saw them hold and
 * that nothing else held then, without waiting for a full pass (listing, a /proc pass and the
 * verdicts, then the Reaper's confirming pass): the verdict is {@link ExitVerdict}'s, and the
 * Reaper carries it out with every check it makes for a full pass's reap, its confirming pass
 * reading every fd table but no maps (each mapping of the file refuses the write lease, the last
 * check). Its cost does not grow with the mounts' files, only with the processes' fd tables.
 *
 * <p>What it reaped is its own report ({@link PassReport#exitPass}), told to the outputs on the
 * pass thread as soon as the files are unlinked, with the age and evidence at that reap: the
 * journal has each reap's event before the daemon does anything else, and a stop waits for a reap
 * under way to be told ({@link #finish}). A full pass still follows, when {@link PassSchedule}
 * says: where this path reaped everything the exited holders left, once exits have been quiet
 * (so a crash of many ranks is reaped exit by exit instead of behind one full pass each); where it
 * left something (skipped, failed, or not decided on this path), at once.
 * Its own CPU time is bounded by the event passes' rule, a {@link PassBudget} of its own: once
 * spent, an exit waits for its full pass as before.
 */
final class ExitReaps {
  private static final Logger LOG = LoggerFactory.getLogger(ExitReaps.class);
  /** No exit path: every exit waits for its full pass (a daemon started without host paths). */
  static final ExitReaps NONE = new ExitReaps(null, null);

  private final Reaper reaper;
  private final ProcessExits exits;
  private final PassBudget budget = new PassBudget();
  /** Held while a reap runs and is told: a stop waits on it ({@link #finish}). */
  private final ReentrantLock reaping = new ReentrantLock();
  /** Where this path's reports go: the daemon's outputs (set before the worker runs). */
  private volatile Output outputs = report -> {};

  private ExitReaps(Reaper reaper, ProcessExits exits) {
    this.reaper = reaper;
    this.exits = exits;
  }

  static ExitReaps on(HostPaths paths) {
    return new ExitReaps(new Reaper(HolderConfirmer.fdTables(new HolderScanner(paths)), paths), new ProcessExits(paths));
  }

  /** Tells this path's reports to {@code to}. */
  void reportTo(Output to) {
    outputs = to;
  }

  /** Whether the exit path may run now: it has one, and its budget is not spent. */
  synchronized boolean mayRun(long now) {
    return reaper != null && budget.nextAt(now) <= now;
  }

  /**
   * Reaps what {@code exited}'s processes left, judged from {@code last} (the last full pass);
   * nothing in a dry run (the full pass reports what it would reap). Runs on the pass thread.
   *
   * @return its outcomes, and whether it did all there was to do for these exits (every file they
   *     held is reaped or still held by a live process), so the full pass may wait
   */
  Done reap(Judgement last, ReapPolicy policy, int[] exited, boolean dryRun) {
    if (reaper == null || last == null || dryRun || exited.length == 0) {
      return new Done(List.of(), false);
    }
    reaping.lock();
    try {
      return reapLocked(last, policy, exited);
    } finally {
      reaping.unlock();
    }
  }

  private Done reapLocked(Judgement last, ReapPolicy policy, int[] exited) {
    long started = System.nanoTime();
    long cpuStarted = threadCpuNanos();
    List<Assessment> candidates = new ArrayList<>();
    boolean left = candidates(last, policy, exited, candidates, Instant.now());
    List<ReapOutcome> outcomes = candidates.isEmpty() ? List.of() : reaper.carry(new Action.Reap(candidates, false));
    List<ReapOutcome> reaped = new ArrayList<>();
    for (ReapOutcome o : outcomes) {
      if (o.result() == ReapOutcome.Result.REAPED) {
        reaped.add(o);
      } else {
        left = true; // skipped or failed: the full pass judges it again, and tells what it finds
        LOG.debug("exit path: {} left to the full pass ({}): {}", o.candidate().segment().displayName(),
            o.result().label(), o.detail());
      }
    }
    long end = System.nanoTime();
    if (!reaped.isEmpty()) {
      outputs.export(PassReport.exitPass(reaped, reaped.stream().map(OutcomeAlerts::reaped).toList(),
          Duration.ofNanos(end - started)));
    }
    // CPU time, not wall time: on a loaded host the wall time is mostly waiting for a CPU, which
    // costs the host nothing, and would spend the budget in the middle of a crash of many ranks.
    long spent = cpuStarted < 0 ? end - started : threadCpuNanos() - cpuStarted;
    synchronized (this) {
      budget.spent(spent, end);
    }
    LOG.debug("exit path: {} candidates, {} reaped in {} us", candidates.size(), reaped.size(), (end - started) / 1000);
    return new Done(outcomes, !left);
  }

  /**
   * Waits, at most {@code most}, for a reap under way to be told to the outputs: called when the
   * daemon stops, so that no unlink goes without its event. False if it did not end in time.
   */
  boolean finish(Duration most) {
    try {
      if (reaping.tryLock(most.toNanos(), TimeUnit.NANOSECONDS)) {
        reaping.unlock();
        return true;
      }
      LOG.warn("the exit path was still reaping when the daemon stopped; its last reap may be missing from the journal");
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * What one run of the exit path did (its reaps already told); {@code complete}: nothing left for
   * the full pass to decide at once.
   */
  record Done(List<ReapOutcome> outcomes, boolean complete) {
    long reaped() {
      return outcomes.stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).count();
    }
  }

  /** This thread's CPU time in nanoseconds, or -1 where the JVM cannot say. */
  private static long threadCpuNanos() {
    try {
      var threads = java.lang.management.ManagementFactory.getThreadMXBean();
      return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
    } catch (LinkageError noManagement) { // a trimmed runtime without java.management: wall time
      return -1;
    }
  }

  /**
   * Adds to {@code found} the files whose every holder in {@code last} has gone, among those
   * {@code exited} held; true if some file all of whose holders have gone is not decided here.
   */
  private boolean candidates(Judgement last, ReapPolicy policy, int[] exited, List<Assessment> found, Instant now) {
    Map<Integer, Boolean> gone = new HashMap<>();
    Predicate<ProcessInfo> isGone = p -> gone.computeIfAbsent(p.pid(), pid -> exits.gone(p));
    boolean undecided = false;
    for (Assessment a : last.segments()) {
      if (!heldByOneOf(a, exited)) {
        continue;
      }
      Assessment leaked = ExitVerdict.leaked(a, last, isGone, policy, now);
      if (leaked != null) {
        found.add(leaked);
      } else if (allGone(a, last, isGone) && anyCounts(a, last)) {
        undecided = true; // a family, a blocker, a name rule: the full pass decides it
      }
      // Only lookups and other users' readers held it: their exits prove nothing (JobEvidence),
      // and bring no pass; the next one waits out its grace.
    }
    return undecided;
  }

  private static boolean allGone(Assessment a, Judgement last, Predicate<ProcessInfo> gone) {
    for (HolderRef h : a.holders()) {
      ProcessInfo p = last.snapshot().processes().get(h.pid());
      if (p == null || !gone.test(p)) {
        return false;
      }
    }
    return true;
  }

  private static boolean anyCounts(Assessment a, Judgement last) {
    for (HolderRef h : a.holders()) {
      if (JobEvidence.holderCounts(h, last.snapshot().processes().get(h.pid()), a.segment())) {
        return true;
      }
    }
    return false;
  }

  private static boolean heldByOneOf(Assessment a, int[] pids) {
    for (HolderRef h : a.holders()) {
      for (int pid : pids) {
        if (h.pid() == pid) {
          return true;
        }
      }
    }
    return false;
  }
}
