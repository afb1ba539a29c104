package org.shmguard.daemon;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.PassReport;
import org.shmguard.host.PathWalks;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread the daemon's passes (and mount rediscovery) run on, apart from the worker loop that
 * must stay responsive. The worker waits for each in short slices, pinging the watchdog, and
 * gives up at once when asked to stop. Every walk to a mount is bounded by {@link PathWalks}, so a
 * pass normally finishes; one that still runs past its deadline waits on the kernel somewhere
 * else. It is reported once (pass_stalled, the log, STATUS) and the watchdog pings stop: nothing
 * is reaped anywhere while it hangs, so systemd should restart the service as it would a hung
 * process. If it returns after all, that is reported too.
 *
 * <pre>{@code
 * PassThread passes = new PassThread(PassThread.DEADLINE, sink, notifier);
 * PassReport pass = passes.run(() -> engine.clean(false), () -> stopping, this::pingWatchdog);   // null if stopping
 * }</pre>
 */
final class PassThread implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PassThread.class);
  /** Far above any healthy pass (milliseconds), and above a few walks that stalled (PathWalks.DEADLINE each). */
  static final Duration DEADLINE = Duration.ofSeconds(30);
  /** How often the worker looks up from a running pass: the bound on how late a stop request is seen. */
  private static final long WAIT_SLICE_MS = 100;

  private final Duration deadline;
  private final AlertSink sink;
  private final ServiceNotifier notifier;
  private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "shmguard-pass");
    t.setDaemon(true); // a pass stuck in the kernel must not keep the JVM from exiting
    return t;
  });

  PassThread(Duration deadline, AlertSink sink, ServiceNotifier notifier) {
    this.deadline = deadline;
    this.sink = sink;
    this.notifier = notifier;
  }

  /** Queues {@code work} after what runs now, for a caller that bounds its own wait (a socket request). */
  <T> CompletableFuture<T> submit(java.util.function.Supplier<T> work) {
    return CompletableFuture.supplyAsync(work, thread);
  }

  /**
   * Runs {@code work} on the pass thread and returns its result, or null as soon as
   * {@code stopping} says so. Called on the worker thread; {@code whileWaiting} (the worker's
   * watchdog ping) runs every slice until the work overruns its deadline, and never after.
   */
  <T> T run(Callable<T> work, BooleanSupplier stopping, Runnable whileWaiting) {
    Future<T> running = thread.submit(work);
    long started = System.nanoTime();
    boolean overran = false;
    while (true) {
      try {
        T result = running.get(WAIT_SLICE_MS, TimeUnit.MILLISECONDS);
        if (overran) {
          long secs = (System.nanoTime() - started) / 1_000_000_000L;
          LOG.warn("the stalled pass finished after {} s; the daemon works again", secs);
          sink.emit(Alert.of(EventKind.PASS_STALLED, "the stalled pass finished after " + secs + " s; reaping resumes")
              .with("SHM_PASS_SECONDS", secs));
        }
        return result;
      } catch (TimeoutException e) {
        if (stopping.getAsBoolean()) {
          return null;
        }
        long now = System.nanoTime();
        if (!overran && now - started > deadline.toNanos()) {
          overran = true;
          reportOverrun(now - started);
        }
        if (!overran) {
          whileWaiting.run();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r;
        }
        throw new IllegalStateException(e.getCause());
      }
    }
  }

  /**
   * Runs {@code work} as {@link #run} does and completes {@code answer} with its result; a stop
   * or a failure fails the answer instead. True when the answer completed.
   */
  <T> boolean answer(WorkRequest.Answer<T> answer, Callable<T> work, BooleanSupplier stopping, Runnable whileWaiting) {
    try {
      T result = run(work, stopping, whileWaiting);
      if (result == null && stopping.getAsBoolean()) {
        answer.fail(new IllegalStateException(WorkQueue.STOPPING));
        return false;
      }
      answer.complete(result);
      return true;
    } catch (RuntimeException e) {
      answer.fail(e);
      return false;
    }
  }

  private void reportOverrun(long nanos) {
    long secs = nanos / 1_000_000_000L;
    var stuck = PathWalks.shared().stuckPaths();
    String what = "a pass has run for " + secs + " s (deadline " + deadline.toSeconds()
        + " s): it waits on the kernel; nothing is reaped until it returns"
        + (stuck.isEmpty() ? "" : "; walks not answering: " + String.join(", ", stuck))
        + (notifier.watchdogPeriod() == null ? "" : "; watchdog pings stop, so systemd restarts the service");
    LOG.error("{}", what);
    sink.emit(Alert.of(EventKind.PASS_STALLED, what).with("SHM_PASS_SECONDS", secs));
    notifier.status("stalled: " + what);
  }

  /** A pass under way finishes on its own; one stuck in the kernel ends with the process. */
  @Override
  public void close() {
    thread.shutdown();
  }
}
