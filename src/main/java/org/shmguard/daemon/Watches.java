package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.BitSet;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Poll;
import org.shmguard.policy.Judgement;

/**
 * What the worker waits on, in one poll: inotify on every mount it may act in
 * ({@link MountWatches}), a pidfd on every holder worth watching ({@link ExitWatches},
 * {@link WatchedHolders}), and the {@link Poll}'s own wake for requests. After each full pass
 * {@link #sync} makes the watches match what the pass saw.
 *
 * <pre>{@code
 * Watches.Woken w = watches.await(timeoutMs);   // mount events, and the pids that exited (forgotten here)
 * if (watches.sync(report.judgement())) { ... } // something changed before its watch existed: look again
 * }</pre>
 */
final class Watches implements AutoCloseable {
  /** The longest one wait lasts when nothing is due: a minute. */
  static final int IDLE_WAIT_MS = 60_000;
  private final MountWatches mounts;
  private final ExitWatches exits;
  private final Poll poll;

  Watches(MountWatches mounts, ExitWatches exits, Poll poll) {
    this.mounts = mounts;
    this.exits = exits;
    this.poll = poll;
  }

  /** What woke one wait: events on the watched mounts, and the holders whose pidfds fired. */
  record Woken(boolean mountEvents, int[] exited) {}

  /**
   * Waits at most {@code timeoutMs} for an event, an exit or a {@link #wake}. The pids that
   * exited are no longer watched from here on: their exits are told once.
   */
  Woken await(int timeoutMs) throws IOException {
    int[][] holders = exits.snapshot();
    int[] fds = new int[holders[1].length + 1];
    fds[0] = mounts.fd();
    System.arraycopy(holders[1], 0, fds, 1, holders[1].length);
    BitSet woken = poll.await(fds, timeoutMs);
    boolean events = woken.get(0) && mounts.drain().events() > 0;
    int[] exited = woken.stream().filter(i -> i > 0).map(i -> holders[0][i - 1]).toArray();
    for (int pid : exited) {
      exits.exited(pid);
    }
    return new Woken(events, exited);
  }

  /** The watched holders' pids and pidfds, in one order: what a full pass looks at for exits ({@link ExitReaps#watching}). */
  int[][] holders() {
    return exits.snapshot();
  }

  /** Stops watching {@code pids}, whose exits were seen elsewhere (inside a full pass). */
  void exited(int[] pids) {
    for (int pid : pids) {
      exits.exited(pid);
    }
  }

  /**
   * How long one {@link #await} may last: until the schedule's next deadline ({@code waitNanos},
   * {@link Long#MAX_VALUE} for none) or the watchdog's period (null for none), whichever is first,
   * rounded up to a millisecond, at most {@link #IDLE_WAIT_MS}.
   */
  static int timeoutMs(long waitNanos, Duration watchdog) {
    long wait = watchdog == null ? waitNanos : Math.min(waitNanos, watchdog.toNanos());
    if (wait == Long.MAX_VALUE) {
      return IDLE_WAIT_MS;
    }
    return (int) Math.max(0, Math.min(IDLE_WAIT_MS, (wait + 999_999) / 1_000_000));
  }

  /** Makes a current or the next {@link #await} return at once; safe from any thread. */
  void wake() {
    poll.wake();
  }

  /**
   * Watches what the pass that judged {@code j} saw: the mounts it may act in (a change in a
   * mount shmguard only reports needs no pass, and a user churning files in their own tmpfs cannot
   * drive passes), and the holders {@link WatchedHolders} names. True when something may have
   * changed before its watch existed (a new mount's files, a holder already gone): look once more.
   */
  boolean sync(Judgement j) {
    boolean newMounts = mounts.sync(j.snapshot().mounts().stream().filter(ShmMount::mayAct).toList());
    boolean goneAlready = exits.sync(WatchedHolders.of(j));
    return newMounts || goneAlready;
  }

  long overflows() {
    return mounts.overflows();
  }

  int mounts() {
    return mounts.size();
  }

  int holderCount() {
    return exits.size();
  }

  /** Closes every watch; the poll is its owner's to close. */
  @Override
  public void close() {
    exits.close();
    mounts.close();
  }
}
