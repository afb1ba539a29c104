package org.shmguard.daemon;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.shmguard.engine.PassReport;
import org.shmguard.model.ContainerStart;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.ContainerShmSizer;

/**
 * One thing the daemon's worker is asked to do: every request the worker takes, from the
 * schedules (a trigger), from its own poll (a holder's exit) and from root over the socket (an
 * asked request, answered through its {@link Answer}). The worker takes them from one
 * {@link WorkQueue} and runs each on the pass thread.
 *
 * <pre>{@code
 * CompletableFuture<PassReport> done = worker.ask(WorkRequest.remount(mount, null, "asked by root", Duration.ofSeconds(60)));
 * worker.offer(WorkRequest.Trigger.SWEEP);
 * }</pre>
 */
sealed interface WorkRequest permits WorkRequest.Trigger, WorkRequest.Exit, WorkRequest.Asked {

  /** A clock's or an operator's nudge, answered by nobody; several of one kind merge into one. */
  enum Trigger implements WorkRequest {
    /** A full pass, not waiting for the pass budget (the periodic sweep). */
    SWEEP,
    /** A statvfs of each mount the last full pass measured ({@link Heartbeat}). */
    HEARTBEAT,
    /** The mounts looked for again; a full pass if they changed. */
    REDISCOVER,
    /** The journal summary of the last full pass. */
    SUMMARY
  }

  /** Holders whose pidfds fired: an exit pass for what they left, before anything else. */
  record Exit(int[] pids) implements WorkRequest {
    public Exit {
      pids = pids.clone();
      if (pids.length == 0) {
        throw new IllegalArgumentException("an exit names at least one pid");
      }
    }

    /** This exit and {@code later}'s, each pid once. */
    Exit and(Exit later) {
      return new Exit(java.util.stream.IntStream.concat(java.util.Arrays.stream(pids), java.util.Arrays.stream(later.pids))
          .distinct().toArray());
    }
  }

  /** A request someone waits on: its answer completes once it is carried out, or fails. */
  sealed interface Asked<T> extends WorkRequest permits FullPass, DryRun, Remount, Prepare, Reload {
    Answer<T> answer();
  }

  /** Root's CLEAN (and {@code Daemon.passNow}): the next full pass, answered with its report. */
  record FullPass(Answer<PassReport> answer) implements Asked<PassReport> {}

  /** Root's CLEAN in a dry run: a pass that reaps nothing and disturbs no planner. */
  record DryRun(Answer<PassReport> answer) implements Asked<PassReport> {}

  /** Root's REMOUNT: {@code mount} grown to {@code sizeBytes} (null: the configured target). */
  record Remount(ShmMount mount, Long sizeBytes, String trigger, Answer<PassReport> answer) implements Asked<PassReport> {
    public Remount {
      Objects.requireNonNull(mount, "mount");
    }
  }

  /** Root's PREPARE (a starting container's OCI hook): its /dev/shm sized by {@code sizer}. */
  record Prepare(ContainerShmSizer sizer, ContainerStart start, Answer<ContainerShmSizer.Outcome> answer)
      implements Asked<ContainerShmSizer.Outcome> {
    public Prepare {
      Objects.requireNonNull(sizer, "sizer");
      Objects.requireNonNull(start, "start");
    }
  }

  /**
   * A reloaded configuration: {@code onPassThread} swaps its settings in between two passes, then
   * the worker looks for mounts with {@code rediscovery} and runs a full pass.
   */
  record Reload(Runnable onPassThread, Rediscovery rediscovery, Answer<Void> answer) implements Asked<Void> {}

  static FullPass fullPass() {
    return new FullPass(Answer.unbounded("a full pass"));
  }

  static DryRun dryRun() {
    return new DryRun(Answer.unbounded("a dry run"));
  }

  static Remount remount(ShmMount mount, Long sizeBytes, String trigger, Duration within) {
    return new Remount(mount, sizeBytes, trigger, Answer.within("remounting " + mount.displayName() + " (" + trigger + ")",
        within, System.nanoTime()));
  }

  static Prepare prepare(ContainerShmSizer sizer, ContainerStart start, Duration within) {
    return new Prepare(sizer, start, Answer.within("sizing container " + start.shortId() + "'s /dev/shm", within,
        System.nanoTime()));
  }

  static Reload reload(Runnable onPassThread, Rediscovery rediscovery) {
    return new Reload(onPassThread, rediscovery, Answer.unbounded("a reload"));
  }

  /**
   * Where an asked request's result goes, and the one deadline rule: a request still waiting
   * after its time (a pass stuck in the kernel held the thread, and the caller was told it failed)
   * is dropped, never carried out late ({@link #expired}).
   */
  final class Answer<T> {
    private final CompletableFuture<T> future = new CompletableFuture<>();
    private final String what;
    private final long deadline;
    private final boolean bounded;

    private Answer(String what, long deadline, boolean bounded) {
      this.what = what;
      this.deadline = deadline;
      this.bounded = bounded;
    }

    /** An answer whose request is dropped once {@code within} has passed since {@code now} (nanoTime). */
    static <T> Answer<T> within(String what, Duration within, long now) {
      return new Answer<>(what, now + within.toNanos(), true);
    }

    /** An answer whose request waits as long as it takes (the caller bounds its own wait). */
    static <T> Answer<T> unbounded(String what) {
      return new Answer<>(what, 0, false);
    }

    /** What was asked, for the log: "remounting /dev/shm (asked by root over the advice socket)". */
    String what() {
      return what;
    }

    /** Whether the request is past its time at {@code now}: it must be dropped, not carried out. */
    boolean expired(long now) {
      return bounded && now - deadline > 0;
    }

    CompletableFuture<T> future() {
      return future;
    }

    void complete(T value) {
      future.complete(value);
    }

    void fail(Throwable why) {
      future.completeExceptionally(why);
    }
  }
}
