package org.shmguard.daemon;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.quartz.CronScheduleBuilder;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;

/**
 * The daemon's clock-driven triggers, run by Quartz: the full sweep, mount rediscovery and the
 * journal summary (a cron expression). A job only hands a request to the worker, which does all
 * the work on its own thread; so a slow pass delays the next request instead of running two
 * passes at once. Quartz's scheduler thread sleeps until the next trigger is due, and its jobs run
 * on a {@link QuietThreadPool}, so an idle daemon is not woken between triggers.
 */
final class Schedules implements AutoCloseable {
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final String WORKER = "worker";
  private final Scheduler scheduler;

  private Schedules(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  static Schedules start(Worker worker, Duration sweep, Duration rediscover, String summaryCron) throws SchedulerException {
    Properties p = new Properties();
    p.setProperty("org.quartz.scheduler.instanceName", "shmguard-" + INSTANCES.incrementAndGet());
    p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
    p.setProperty("org.quartz.scheduler.makeSchedulerThreadDaemon", "true");
    // Quartz's SimpleThreadPool polls every 500 ms while idle; this pool blocks until a job comes.
    p.setProperty("org.quartz.threadPool.class", QuietThreadPool.class.getName());
    p.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
    p.setProperty("org.quartz.jobStore.misfireThreshold", "5000");
    Scheduler s = new StdSchedulerFactory(p).getScheduler();
    s.getContext().put(WORKER, worker);
    every(s, "sweep", SweepJob.class, sweep);
    every(s, "rediscover", RediscoverJob.class, rediscover);
    if (!summaryCron.isEmpty()) {
      s.scheduleJob(JobBuilder.newJob(SummaryJob.class).withIdentity("summary").build(),
          TriggerBuilder.newTrigger().withIdentity("summary")
              .withSchedule(CronScheduleBuilder.cronSchedule(summaryCron).withMisfireHandlingInstructionDoNothing()).build());
    }
    s.start();
    return new Schedules(s);
  }

  private static void every(Scheduler s, String name, Class<? extends Job> job, Duration period) throws SchedulerException {
    Trigger t = TriggerBuilder.newTrigger().withIdentity(name)
        .startAt(new java.util.Date(System.currentTimeMillis() + period.toMillis()))
        .withSchedule(SimpleScheduleBuilder.simpleSchedule().withIntervalInMilliseconds(period.toMillis())
            .repeatForever().withMisfireHandlingInstructionNextWithRemainingCount())
        .build();
    s.scheduleJob(JobBuilder.newJob(job).withIdentity(name).build(), t);
  }

  @Override
  public void close() {
    try {
      scheduler.shutdown(false);
    } catch (SchedulerException ignored) {
      // shutting down: nothing left to schedule
    }
  }

  private static Worker worker(JobExecutionContext ctx) throws JobExecutionException {
    try {
      return (Worker) ctx.getScheduler().getContext().get(WORKER);
    } catch (SchedulerException e) {
      throw new JobExecutionException(e);
    }
  }

  /** The periodic full sweep: the safety net under the event path. */
  public static final class SweepJob implements Job {
    @Override
    public void execute(JobExecutionContext ctx) throws JobExecutionException {
      worker(ctx).request(Worker.Request.SWEEP);
    }
  }

  /** Looks for mounts that appeared or went away. */
  public static final class RediscoverJob implements Job {
    @Override
    public void execute(JobExecutionContext ctx) throws JobExecutionException {
      worker(ctx).request(Worker.Request.REDISCOVER);
    }
  }

  /** A summary of every mount to the journal. */
  public static final class SummaryJob implements Job {
    @Override
    public void execute(JobExecutionContext ctx) throws JobExecutionException {
      worker(ctx).request(Worker.Request.SUMMARY);
    }
  }
}
