package org.shmguard.host;

import java.util.BitSet;
import java.util.List;
import org.shmguard.model.HolderIndex;

/**
 * The result of one pass over /proc: who holds what, which pids exist, and what could not be read.
 * {@code livePids} leaves out processes of which no thread has an address space (zombies and
 * kernel threads; a process whose main thread exited while another lives on is alive):
 * they hold nothing, and an exited holder that its parent has not reaped yet counts as exited.
 *
 * @param problems one line per kind of failure; non-empty means the pass is incomplete
 * @param vanished processes that exited while the pass read them (normal, not a problem)
 */
public record HolderPass(HolderIndex index, BitSet livePids, List<String> problems, int processes, int vanished) {
  public HolderPass {
    livePids = (BitSet) livePids.clone();
    problems = List.copyOf(problems);
  }

  public boolean complete() {
    return problems.isEmpty();
  }
}
