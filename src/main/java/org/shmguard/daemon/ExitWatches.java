package org.shmguard.daemon;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.IntFunction;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Pidfd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pidfd on every process that holds a visible, reapable-by-pattern segment, so the daemon
 * learns the moment a holder exits and can reap what it leaves behind without waiting for the
 * grace period or the next sweep.
 */
final class ExitWatches implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExitWatches.class);
  private final int limit;
  private final IntFunction<Long> startTicks;
  private final Map<Integer, Integer> fdByPid = new HashMap<>();
  private boolean unsupported;
  private boolean limitLogged;

  /** {@code startTicks} reads a pid's start time now (null if gone), to refuse a reused pid. */
  ExitWatches(int limit, IntFunction<Long> startTicks) {
    this.limit = limit;
    this.startTicks = startTicks;
  }

  /**
   * Watches exactly the processes in {@code holders}. Returns true when one of them had exited
   * already (or its pid was reused): the caller should run another pass at once.
   */
  boolean sync(Map<Integer, ProcessInfo> holders) {
    for (Iterator<Map.Entry<Integer, Integer>> it = fdByPid.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Integer, Integer> e = it.next();
      if (!holders.containsKey(e.getKey())) {
        Pidfd.close(e.getValue());
        it.remove();
      }
    }
    if (unsupported || limit == 0) {
      return false;
    }
    boolean exitedAlready = false;
    for (ProcessInfo p : holders.values()) {
      if (fdByPid.containsKey(p.pid())) {
        continue;
      }
      if (fdByPid.size() >= limit) {
        if (!limitLogged) {
          limitLogged = true;
          LOG.warn("more than daemon.watchHolders={} holders; the others' exits are caught by the sweep", limit);
        }
        break;
      }
      try {
        int fd = Pidfd.open(p.pid());
        Long now = startTicks.apply(p.pid());
        if (now == null || (p.startTicks() >= 0 && now != p.startTicks())) {
          Pidfd.close(fd); // the holder is gone and its pid may already name another process
          exitedAlready = true;
          continue;
        }
        fdByPid.put(p.pid(), fd);
      } catch (NoSuchFileException e) {
        exitedAlready = true;
      } catch (IOException e) {
        unsupported = true;
        LOG.warn("cannot watch holders for their exit ({}); leaks are found by the sweep instead", e.getMessage());
        return false;
      }
    }
    return exitedAlready;
  }

  /** The pids and descriptors, in a fixed order for one poll. */
  int[][] snapshot() {
    int[] pids = new int[fdByPid.size()];
    int[] fds = new int[fdByPid.size()];
    int i = 0;
    for (Map.Entry<Integer, Integer> e : fdByPid.entrySet()) {
      pids[i] = e.getKey();
      fds[i++] = e.getValue();
    }
    return new int[][] {pids, fds};
  }

  /** Forgets a holder whose pidfd said it exited. */
  void exited(int pid) {
    Integer fd = fdByPid.remove(pid);
    if (fd != null) {
      Pidfd.close(fd);
    }
  }

  int size() {
    return fdByPid.size();
  }

  @Override
  public void close() {
    fdByPid.values().forEach(Pidfd::close);
    fdByPid.clear();
  }
}
