package org.shmguard.daemon;

import java.util.HashMap;
import java.util.Map;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;

/**
 * Whose exits are worth a pidfd after a pass: every holder of a file judged {@link Verdict#HELD}
 * (the exit path may reap it the moment they are gone), and, while some file waits on its job,
 * each PyTorch shm manager with clients (its exit ends the job, and its files are judged again at
 * once, not at the next sweep). Pure: the judgement in, pids out.
 *
 * <pre>{@code
 * if (exits.sync(WatchedHolders.of(report.judgement()))) { ... }   // one had exited already
 * }</pre>
 */
final class WatchedHolders {
  private WatchedHolders() {}

  /** The processes to watch after {@code j}, by pid, as {@code j}'s snapshot saw them. */
  static Map<Integer, ProcessInfo> of(Judgement j) {
    Map<Integer, ProcessInfo> pids = new HashMap<>();
    boolean waiting = false;
    for (Assessment a : j.segments()) {
      waiting |= a.verdict() == Verdict.WAITING;
      if (a.verdict() == Verdict.HELD) {
        for (var h : a.holders()) {
          ProcessInfo info = j.snapshot().processes().get(h.pid());
          if (info != null) {
            pids.putIfAbsent(h.pid(), info);
          }
        }
      }
    }
    if (waiting) {
      for (var m : j.snapshot().torchManagers().managers()) {
        if (m.clients() > 0 && m.startTicks() >= 0) {
          pids.putIfAbsent(m.hostPid(), new ProcessInfo(m.hostPid(), "torch_shm_manag", m.uid(), null, null, m.startTicks()));
        }
      }
    }
    return pids;
  }
}
