package org.shmguard.daemon;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.shmguard.engine.PassReport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's one queue of {@link WorkRequest}s, safe from any thread: the schedules, the
 * socket's threads and the worker's own poll put requests in, the worker takes them all at each
 * wake. Who waits on what is decided here and nowhere else: a request past its time is dropped
 * when taken, a full pass's waiters are served by the next pass that starts after they were
 * taken, a newer reload replaces one still waiting, and a stop fails every answer still owed.
 *
 * <pre>{@code
 * WorkQueue queue = new WorkQueue(poll::wake);
 * CompletableFuture<PassReport> f = queue.ask(WorkRequest.fullPass());  // a socket thread
 * for (WorkRequest r : queue.take(System.nanoTime())) { ... }           // the worker
 * List<WorkRequest.Answer<PassReport>> served = queue.passStarts();
 * }</pre>
 */
final class WorkQueue {
  private static final Logger LOG = LoggerFactory.getLogger(WorkQueue.class);
  static final String STOPPING = "the daemon is stopping";
  static final String TOO_LATE = "the request waited too long";
  static final String REPLACED = "a newer reload replaced it";

  private final Runnable wake;
  private final ArrayDeque<WorkRequest> pending = new ArrayDeque<>();
  /** Full passes asked for and taken: the next pass that starts answers them. */
  private final List<WorkRequest.Answer<PassReport>> awaitingPass = new ArrayList<>();
  private boolean closed;

  /** @param wake makes the worker's wait return (its poll's wake), called after each request */
  WorkQueue(Runnable wake) {
    this.wake = wake;
  }

  /**
   * Adds {@code r}: a trigger already waiting is not added again, a holder's exit joins one
   * already waiting and goes before everything else, a reload replaces one still waiting (whose
   * answer fails). Once the queue is closed an asked request fails at once; others are dropped.
   */
  void offer(WorkRequest r) {
    synchronized (this) {
      if (closed) {
        if (r instanceof WorkRequest.Asked<?> a) {
          a.answer().fail(new IllegalStateException(STOPPING));
        }
        return;
      }
      enqueue(r);
    }
    wake.run();
  }

  private void enqueue(WorkRequest r) {
    if (r instanceof WorkRequest.Trigger && pending.contains(r)) {
      return; // one waiting is enough
    }
    if (r instanceof WorkRequest.Exit e) {
      WorkRequest.Exit earlier = pending.peekFirst() instanceof WorkRequest.Exit x ? x : null;
      if (earlier != null) {
        pending.removeFirst();
      }
      pending.addFirst(earlier == null ? e : earlier.and(e));
      return;
    }
    if (r instanceof WorkRequest.Reload) {
      for (WorkRequest p : pending) {
        if (p instanceof WorkRequest.Reload older) {
          older.answer().fail(new IllegalStateException(REPLACED));
        }
      }
      pending.removeIf(p -> p instanceof WorkRequest.Reload);
    }
    pending.addLast(r);
  }

  /** Offers {@code r} and returns the future its answer completes. */
  <T> CompletableFuture<T> ask(WorkRequest.Asked<T> r) {
    offer(r);
    return r.answer().future();
  }

  /**
   * Everything waiting, in the order to carry it out. An asked request past its time at
   * {@code now} is not among them: its answer fails and the log says what was dropped. A full
   * pass's answer waits from now on for {@link #passStarts}.
   */
  List<WorkRequest> take(long now) {
    List<WorkRequest> taken = new ArrayList<>();
    synchronized (this) {
      for (WorkRequest r; (r = pending.pollFirst()) != null; ) {
        if (r instanceof WorkRequest.Asked<?> a && a.answer().expired(now)) {
          LOG.warn("not {}: the request waited past its time for a pass to end", a.answer().what());
          a.answer().fail(new IllegalStateException(TOO_LATE));
          continue;
        }
        if (r instanceof WorkRequest.FullPass f) {
          awaitingPass.add(f.answer());
        }
        taken.add(r);
      }
    }
    return taken;
  }

  /** A full pass starts: the answers it serves, those of every full pass taken before it. */
  synchronized List<WorkRequest.Answer<PassReport>> passStarts() {
    List<WorkRequest.Answer<PassReport>> served = List.copyOf(awaitingPass);
    awaitingPass.clear();
    return served;
  }

  /** The daemon stops: every answer still owed fails, and so does every request asked from now on. */
  void close() {
    List<WorkRequest.Answer<?>> owed = new ArrayList<>();
    synchronized (this) {
      closed = true;
      for (WorkRequest r : pending) {
        if (r instanceof WorkRequest.Asked<?> a) {
          owed.add(a.answer());
        }
      }
      pending.clear();
      owed.addAll(awaitingPass);
      awaitingPass.clear();
    }
    owed.forEach(a -> a.fail(new IllegalStateException(STOPPING)));
  }
}
