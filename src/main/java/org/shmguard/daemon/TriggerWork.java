package org.shmguard.daemon;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.shmguard.engine.Output;
import org.shmguard.engine.PassReport;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Planner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock triggers the worker carries out between passes ({@link WorkRequest.Trigger}, which
 * {@link Schedules} offers): the sweep asks the {@link PassSchedule} for a pass; the heartbeat (a
 * statvfs per mount, {@link Heartbeat}) and the rediscovery of the mounts ({@link Rediscovery}) run
 * on the pass thread and make a pass due when they find a change; the summary tells the outputs
 * the last full pass's journal summary. None of them is a pass: they read no /proc, judge and reap
 * nothing, and the status, the probes and CHECK count full passes only.
 *
 * <pre>{@code
 * TriggerWork triggers = new TriggerWork(schedule, Heartbeat.system(), rediscovery, planner, outputs,
 *     ledger::status, passThread, () -> stopping, this::pingWatchdog);
 * triggers.carryOut(WorkRequest.Trigger.HEARTBEAT, now);  // on the worker thread
 * triggers.passSaw(report.judgement());                   // after each full pass
 * }</pre>
 */
final class TriggerWork {
  private static final Logger LOG = LoggerFactory.getLogger(TriggerWork.class);

  private final PassSchedule schedule;
  private final Heartbeat heartbeat;
  private final Planner planner;
  private final Output outputs;
  private final Supplier<DaemonStatus> status;
  private final PassThread passThread;
  private final BooleanSupplier stopping;
  private final Runnable whileWaiting;
  private Rediscovery rediscovery;
  /** The mounts the last full pass saw: what a rediscovery compares with. */
  private Set<Dev> knownMounts = new HashSet<>();

  /**
   * @param status the daemon's status: its last full judgement and what was reaped so far
   * @param whileWaiting run while the caller waits for the pass thread (the watchdog's ping)
   */
  TriggerWork(PassSchedule schedule, Heartbeat heartbeat, Rediscovery rediscovery, Planner planner, Output outputs,
      Supplier<DaemonStatus> status, PassThread passThread, BooleanSupplier stopping, Runnable whileWaiting) {
    this.schedule = schedule;
    this.heartbeat = heartbeat;
    this.rediscovery = rediscovery;
    this.planner = planner;
    this.outputs = outputs;
    this.status = status;
    this.passThread = passThread;
    this.stopping = stopping;
    this.whileWaiting = whileWaiting;
  }

  /** Carries out {@code t}, taken at {@code now}, on the worker thread; what reads the host runs on the pass thread. */
  void carryOut(WorkRequest.Trigger t, long now) {
    switch (t) {
      case SWEEP -> schedule.request(now);
      case HEARTBEAT -> heartbeat(now);
      case REDISCOVER -> rediscover(now);
      case SUMMARY -> summary();
    }
  }

  /** A full pass saw the mounts of {@code j}: a rediscovery that finds others brings a pass. */
  void passSaw(Judgement j) {
    knownMounts = j.snapshot().mounts().stream().map(ShmMount::dev).collect(Collectors.toSet());
  }

  /** Mounts are looked for with {@code r} from now on (a reload's settings). */
  void rediscoverWith(Rediscovery r) {
    rediscovery = r;
  }

  /** How many heartbeats ran since start. */
  long heartbeats() {
    return heartbeat.beats();
  }

  /**
   * The heartbeat: a statvfs of each mount the last full pass measured, on the pass thread. A
   * change beyond its thresholds makes a full pass due as an event does; it never reaps, and it is
   * not a pass.
   */
  private void heartbeat(long now) {
    Judgement last = status.get().last();
    String why = passThread.run(() -> {
      String w = heartbeat.changeSince(last);
      return w == null ? "" : w;
    }, stopping, whileWaiting);
    if (why != null && !why.isEmpty()) {
      LOG.debug("heartbeat: {} since the last full pass; a full pass now", why);
      schedule.event(now);
    }
  }

  /** Discovery reads every namespace's mounts, on the pass thread; a full pass if they changed. */
  private void rediscover(long now) {
    Set<Dev> found = passThread.run(rediscovery::mounts, stopping, whileWaiting);
    if (found != null && (!found.equals(knownMounts) || rediscovery.containerEnded())) {
      // new or gone mounts, or a pod's volume whose container ended: a full pass with its mounts
      // found afresh judges whether every writer of it has exited (WritersGone) before the next sweep
      schedule.request(now);
    }
  }

  private void summary() {
    DaemonStatus s = status.get();
    Judgement j = s.last();
    if (j != null) {
      outputs.export(PassReport.between(List.of(), planner.summary(j, s.reaped())));
    }
  }
}
