package org.shmguard.daemon;

import java.text.ParseException;
import java.time.Duration;
import java.util.Date;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.quartz.CronExpression;

/**
 * The daemon's clock-driven triggers: the full sweep, mount rediscovery and the journal summary.
 * A trigger only hands a request to the worker, which does all the work on its own thread; so a
 * slow pass delays the next request instead of running two passes at once.
 *
 * <p>One timer thread that sleeps until the next trigger is due. (Quartz's scheduler ran these
 * before; its scheduler and pool threads woke several times a second while idle and its start
 * loaded hundreds of classes, for three timers. Only its cron parser is still used.)
 */
final class Schedules implements AutoCloseable {
  private final ScheduledThreadPoolExecutor timer;
  private final CronExpression summary;
  private final Worker worker;

  private Schedules(ScheduledThreadPoolExecutor timer, CronExpression summary, Worker worker) {
    this.timer = timer;
    this.summary = summary;
    this.worker = worker;
  }

  /**
   * Starts the timers; the first sweep and rediscovery come one period from now (the worker's
   * first pass runs at once on its own).
   *
   * @param summaryCron a Quartz cron expression (validated with the configuration), or "" for none
   */
  static Schedules start(Worker worker, Duration sweep, Duration rediscover, String summaryCron) {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "shmguard-schedules");
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true);
    CronExpression cron = null;
    if (!summaryCron.isEmpty()) {
      try {
        cron = new CronExpression(summaryCron);
      } catch (ParseException e) {
        timer.shutdownNow();
        throw new IllegalArgumentException("daemon.summary: " + e.getMessage(), e);
      }
    }
    Schedules s = new Schedules(timer, cron, worker);
    // With a fixed delay, triggers missed while the host was suspended are not replayed in a burst.
    every(timer, sweep, () -> worker.request(Worker.Request.SWEEP));
    every(timer, rediscover, () -> worker.request(Worker.Request.REDISCOVER));
    s.scheduleSummary(new Date());
    return s;
  }

  private static void every(ScheduledThreadPoolExecutor timer, Duration period, Runnable r) {
    long ms = period.toMillis();
    timer.scheduleWithFixedDelay(r, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** The next summary after {@code after}, by the wall clock the cron expression speaks of. */
  private void scheduleSummary(Date after) {
    if (summary == null || timer.isShutdown()) {
      return;
    }
    Date next = summary.getNextValidTimeAfter(after);
    if (next == null) {
      return; // an expression with no future time (a past year): nothing more to schedule
    }
    long delay = Math.max(0, next.getTime() - System.currentTimeMillis());
    timer.schedule(() -> {
      worker.request(Worker.Request.SUMMARY);
      scheduleSummary(next);
    }, delay, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
