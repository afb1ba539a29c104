package org.shmguard.daemon;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.engine.Engine;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.host.ProcessExits;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.Action;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.ExitVerdict;
import org.shmguard.policy.Judgement;
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
 * <p>What it reaped is reported with the next full pass (which every exit still brings): its
 * outcomes join that pass's ({@link #merged}), so the journal, the metrics and the status count
 * them as any reap. What it did not reap (skipped, or not on this path) the full pass judges again.
 */
final class ExitReaps {
  private static final Logger LOG = LoggerFactory.getLogger(ExitReaps.class);
  /** No exit path: every exit waits for its full pass (a daemon started without host paths). */
  static final ExitReaps NONE = new ExitReaps(null, null);

  private final Reaper reaper;
  private final ProcessExits exits;
  private final List<ReapOutcome> pending = new ArrayList<>();

  private ExitReaps(Reaper reaper, ProcessExits exits) {
    this.reaper = reaper;
    this.exits = exits;
  }

  static ExitReaps on(HostPaths paths) {
    return new ExitReaps(new Reaper(HolderConfirmer.fdTables(new HolderScanner(paths)), paths), new ProcessExits(paths));
  }

  /**
   * Reaps what {@code exited}'s processes left, judged from {@code last} (the last full pass);
   * nothing in a dry run (the full pass reports what it would reap). Runs on the pass thread.
   */
  synchronized List<ReapOutcome> reap(Judgement last, ReapPolicy policy, int[] exited, boolean dryRun) {
    if (reaper == null || last == null || dryRun || exited.length == 0) {
      return List.of();
    }
    long started = System.nanoTime();
    List<Assessment> candidates = candidates(last, policy, exited);
    if (candidates.isEmpty()) {
      return List.of();
    }
    List<ReapOutcome> outcomes = reaper.carry(new Action.Reap(candidates, false));
    for (ReapOutcome o : outcomes) {
      if (o.result() == ReapOutcome.Result.SKIPPED) {
        LOG.debug("exit path: {} left to the full pass: {}", o.candidate().segment().displayName(), o.detail());
      } else {
        pending.add(o);
      }
    }
    LOG.debug("exit path: {} candidates, {} reaped in {} us", candidates.size(),
        outcomes.stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).count(), (System.nanoTime() - started) / 1000);
    return outcomes;
  }

  /** The files whose every holder in {@code last} has gone, among those {@code exited} held. */
  private List<Assessment> candidates(Judgement last, ReapPolicy policy, int[] exited) {
    Map<Integer, Boolean> gone = new HashMap<>();
    List<Assessment> found = new ArrayList<>();
    for (Assessment a : last.segments()) {
      if (!heldByOneOf(a, exited)) {
        continue;
      }
      Assessment leaked = ExitVerdict.leaked(a, last,
          (ProcessInfo p) -> gone.computeIfAbsent(p.pid(), pid -> exits.gone(p)), policy);
      if (leaked != null) {
        found.add(leaked);
      }
    }
    return found;
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

  /** {@code pass} with what this path reaped since the last pass before its own outcomes. */
  synchronized Engine.Pass merged(Engine.Pass pass) {
    if (pending.isEmpty()) {
      return pass;
    }
    List<ReapOutcome> all = new ArrayList<>(pending);
    pending.clear();
    all.addAll(pass.outcomes());
    return new Engine.Pass(pass.judgement(), all, pass.dryRun(), pass.took());
  }
}
