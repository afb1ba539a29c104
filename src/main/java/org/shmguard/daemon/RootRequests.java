package org.shmguard.daemon;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
import org.shmguard.engine.PassReport;
import org.shmguard.model.ContainerStart;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.ContainerShmSizer;
import org.shmguard.text.Counts;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.RemountOutcome;

/**
 * What root may ask over the advice socket, as thin adapters onto the worker's {@link WorkQueue}
 * ({@link WorkRequest}): {@code CLEAN} is a pass now (or a dry run), {@code REMOUNT} a remount on
 * the pass thread, {@code PREPARE} a starting container's /dev/shm sized on the pass thread,
 * {@code RELOAD} the configuration read again
 * (as SIGHUP reads it, answered with its verdict); each is answered from the report it came to,
 * which the daemon's outputs were told first (its alerts, its metrics).
 * The server checks the peer before either is asked.
 *
 * <pre>{@code
 * AdviceService.start(config, paths, daemon.rootRequests(), metrics::adviceAnswered);
 * }</pre>
 */
final class RootRequests implements HostActions {
  /** How long a request waits for its pass: a pass stuck in the kernel holds no socket thread longer. */
  static final long TIMEOUT_SECONDS = 60;
  /** A remount or a sizing still waiting after this is dropped (WorkRequest.Answer): its caller gave up. */
  private static final Duration WAIT = Duration.ofSeconds(TIMEOUT_SECONDS);
  static final String REMOUNT_TRIGGER = "asked by root over the advice socket";
  private final Worker worker;
  /** Sizes a starting container's /dev/shm (PREPARE); null when this daemon does not remount. */
  private final ContainerShmSizer sizer;
  /** Runs one reload and gives its verdict; null when this daemon has no configuration file to read again. */
  private final Supplier<ConfigReload.Verdict> reload;

  RootRequests(Worker worker, ContainerShmSizer sizer, Supplier<ConfigReload.Verdict> reload) {
    this.worker = worker;
    this.sizer = sizer;
    this.reload = reload;
  }

  @Override
  public String reload() throws ProtocolException {
    ConfigReload.Verdict v = reload.get();
    if (v == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "this daemon was started without a configuration file to read again");
    }
    if (!v.applied()) {
      throw new ProtocolException(ProtocolException.REJECTED, v.message());
    }
    return v.message();
  }

  @Override
  public String remount(ShmMount mount, Long sizeBytes) throws ProtocolException {
    PassReport report = await(worker.ask(WorkRequest.remount(mount, sizeBytes, REMOUNT_TRIGGER, WAIT)));
    if (report == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "this daemon does not remount");
    }
    return answer(report.remounts().get(0));
  }

  @Override
  public String clean(boolean dryRun) throws ProtocolException {
    return answer(await(worker.ask(dryRun ? WorkRequest.dryRun() : WorkRequest.fullPass())));
  }

  @Override
  public String prepare(ContainerStart start) throws ProtocolException {
    if (sizer == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "this daemon does not size containers");
    }
    return answer(await(worker.ask(WorkRequest.prepare(sizer, start, WAIT))));
  }

  /** The reply to PREPARE: OK when the container's /dev/shm now holds what its GPUs need, an error saying why not. */
  static String answer(ContainerShmSizer.Outcome o) throws ProtocolException {
    return switch (o.result()) {
      case FITS -> o.message();
      case REFUSED -> throw new ProtocolException(ProtocolException.REFUSED, o.message());
      case FAILED -> throw new ProtocolException(ProtocolException.FAILED, o.message());
    };
  }

  /** The reply to REMOUNT: the outcome's one line; refused and failed are errors of their own kind. */
  static String answer(RemountOutcome o) throws ProtocolException {
    if (o.result() != RemountOutcome.Result.GROWN) {
      throw new ProtocolException(o.result() == RemountOutcome.Result.REFUSED ? ProtocolException.REFUSED
          : ProtocolException.FAILED, o.summary());
    }
    return o.summary();
  }

  /** The reply to CLEAN: "reaped 2 of 3 candidates; 0 blockers". */
  static String answer(PassReport pass) {
    long done = pass.outcomes().stream().filter(o -> o.result() == ReapOutcome.Result.REAPED
        || o.result() == ReapOutcome.Result.WOULD_REAP).count();
    return (pass.dryRun() ? "would reap " : "reaped ") + done + " of "
        + Counts.of(pass.outcomes().size(), "candidate") + "; "
        + Counts.of(pass.judgement().plan().blockers().size(), "blocker");
  }

  private static <T> T await(CompletableFuture<T> f) throws ProtocolException {
    try {
      return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ProtocolException(ProtocolException.FAILED, "interrupted");
    } catch (ExecutionException | TimeoutException e) {
      throw new ProtocolException(ProtocolException.FAILED, "the pass did not complete: " + e.getMessage());
    }
  }
}
