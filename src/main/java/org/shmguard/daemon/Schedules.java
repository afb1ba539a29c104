package org.shmguard.daemon;

import java.time.Duration;
import java.util.Date;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.quartz.CronExpression;

/**
 * The daemon's clock-driven triggers: the full sweep, the heartbeat between sweeps, mount
 * rediscovery and the journal summary
 * (a Quartz cron expression, of which only {@link CronExpression} is used: no Quartz scheduler,
 * job store or {@code java.beans} is loaded). One daemon thread of the JDK's scheduled executor
 * sleeps until the next trigger is due and only hands a request to the worker, which does all the
 * work on its own thread; so a slow pass delays the next request instead of running two passes at
 * once, and an idle daemon is not woken between triggers.
 */
final class Schedules implements AutoCloseable {
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private final ScheduledThreadPoolExecutor timer;

  private Schedules(ScheduledThreadPoolExecutor timer) {
    this.timer = timer;
  }

  /**
   * Starts the triggers; {@code summaryCron} is a valid Quartz cron expression (the configuration
   * checked it) or "" for no summary. A {@code heartbeat} not shorter than {@code sweep} is not
   * scheduled: every sweep is a full pass anyway.
   */
  static Schedules start(Worker worker, Duration sweep, Duration heartbeat, Duration rediscover, String summaryCron) {
    String name = "shmguard-schedules-" + INSTANCES.incrementAndGet();
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    every(timer, sweep, () -> worker.offer(WorkRequest.Trigger.SWEEP));
    if (heartbeat.compareTo(sweep) < 0) {
      every(timer, heartbeat, () -> worker.offer(WorkRequest.Trigger.HEARTBEAT));
    }
    every(timer, rediscover, () -> worker.offer(WorkRequest.Trigger.REDISCOVER));
    if (!summaryCron.isEmpty()) {
      CronExpression cron;
      try {
        cron = new CronExpression(summaryCron);
      } catch (java.text.ParseException e) {
        throw new IllegalArgumentException("daemon.summary: " + e.getMessage(), e);
      }
      new Cron(timer, cron, () -> worker.offer(WorkRequest.Trigger.SUMMARY)).next();
    }
    return new Schedules(timer);
  }

  /** Fixed rate, first after one period; a request missed while the worker was busy merges with the next. */
  private static void every(ScheduledThreadPoolExecutor timer, Duration period, Runnable request) {
    long ms = period.toMillis();
    timer.scheduleAtFixedRate(request, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** The summary at each time the expression names: scheduled one at a time, from the clock each time. */
  private record Cron(ScheduledThreadPoolExecutor timer, CronExpression cron, Runnable request) {
    void next() {
      Date at = cron.getNextValidTimeAfter(new Date());
      if (at == null || timer.isShutdown()) {
        return; // an expression with no further time (a year in the past): no more summaries
      }
      long delay = Math.max(0, at.getTime() - System.currentTimeMillis());
      try {
        timer.schedule(() -> {
          request.run();
          next();
        }, delay, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException stopping) {
        // closed meanwhile: nothing left to schedule
      }
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
