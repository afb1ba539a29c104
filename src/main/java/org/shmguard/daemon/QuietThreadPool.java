package org.shmguard.daemon;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.quartz.spi.ThreadPool;

/**
 * Quartz's job thread pool for the daemon: one thread that blocks on its queue until a job comes.
 * Quartz's own SimpleThreadPool polls with a 500 ms timed wait, waking an idle daemon twice a
 * second; the daemon's jobs only post a request to the worker, so one quiet thread is all they need.
 * Quartz creates it by name from the {@code org.quartz.threadPool.class} property.
 */
public final class QuietThreadPool implements ThreadPool {
  private ThreadPoolExecutor executor;
  private String name = "shmguard";

  @Override
  public void initialize() {
    executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, name + "-schedules");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public boolean runInThread(Runnable runnable) {
    if (executor == null || executor.isShutdown()) {
      return false;
    }
    executor.execute(runnable);
    return true;
  }

  /** Always room: a job is queued behind the one running, and every job is a few microseconds long. */
  @Override
  public int blockForAvailableThreads() {
    return 1;
  }

  @Override
  public void shutdown(boolean waitForJobsToComplete) {
    if (executor == null) {
      return;
    }
    executor.shutdown();
    if (waitForJobsToComplete) {
      try {
        executor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public int getPoolSize() {
    return 1;
  }

  @Override
  public void setInstanceId(String id) {
    // one pool per scheduler: nothing to tell apart
  }

  @Override
  public void setInstanceName(String instanceName) {
    this.name = instanceName;
  }
}
