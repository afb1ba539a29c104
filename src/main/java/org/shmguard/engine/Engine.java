package org.shmguard.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.alert.Alert;
import org.shmguard.config.Config;
import org.shmguard.host.HostPaths;
import org.shmguard.host.PathWalks;
import org.shmguard.host.Observer;
import org.shmguard.host.ProcessExits;
import org.shmguard.host.SegmentLister;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Action;
import org.shmguard.policy.ExitVerdict;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.OutcomeAlerts;
import org.shmguard.policy.Plan;
import org.shmguard.policy.Planner;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.RememberedHolders;
import org.shmguard.host.HolderScanner;
import org.shmguard.remedy.HolderConfirmer;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.remedy.Remounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pipeline, observe then decide then act, shared by the one-shot commands and the daemon: one
 * call, {@link #pass}, observes, judges, plans, carries out the plan's {@link Action.Reap} at once
 * (nothing between the judgement and the reap), then the rest of the plan, and returns one
 * {@link PassReport}. It is built with its planner and its {@link Actor}; it keeps the holder
 * history between passes, so a long-lived engine reaps a segment as soon as its last holder exits.
 * A holder's exit is a pass of its own, {@link #exitPass}: no listing and no /proc pass of its
 * own, the files {@link ExitVerdict} decides from the last full pass's judgement, reaped by the
 * same {@link Actor} ({@link Actor#reapOnExit}), and a report of its own.
 *
 * <pre>{@code
 * Engine engine = Engine.create(config, HostPaths.system());             // reaps only: clean
 * PassReport report = engine.clean(false);
 * Engine daemons = Engine.create(config, paths, planner, remounter);      // the daemon's whole plan
 * PassReport pass = daemons.pass(false, false);
 * Engine.Exit exit = daemons.exitPass(pass.judgement(), new int[] {pid});   // its pidfd fired
 * }</pre>
 */
public final class Engine {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  // Replaced together by adopt() (a reloaded configuration), under this engine's lock.
  private Observer observer;
  private volatile Actor actor;
  private volatile ReapPolicy policy;
  private volatile boolean dryRun;
  /** The daemon's decide stage after the judgement; null: the plan is the reap alone (the one-shot commands). */
  private final Planner planner;
  /** Read by the daemon's state keeper without the lock: a pass stuck in the kernel holds it. */
  private volatile HolderHistory history = HolderHistory.empty();
  /** What a daemon before a restart saw hold which file: admitted at the next judgement, then dropped. */
  private RememberedHolders remembered;
  /** Whether a process a judgement saw has gone since: the exit pass's proof, by pid and start time. */
  private final ProcessExits exits;
  /** Run between mounts and every few processes of a pass's observation: the daemon's exit passes. */
  private volatile Runnable between = () -> { };

  Engine(Observer observer, Actor actor, ReapPolicy policy, boolean dryRun, Planner planner, ProcessExits exits) {
    this.exits = exits;
    this.observer = observer;
    this.actor = actor;
    this.policy = policy;
    this.dryRun = dryRun;
    this.planner = planner;
  }

  /** An engine that plans only the reap, and reaps through its own {@link Reaper}: the one-shot commands'. */
  public static Engine create(Config config, HostPaths paths) {
    return create(config, paths, Clock.systemUTC());
  }

  public static Engine create(Config config, HostPaths paths, Clock clock) {
    Observer observer = observer(config, paths, clock);
    return new Engine(observer, acts(observer, paths, null), config.reap().policy(), config.reap().dryRun(), null,
        new ProcessExits(paths));
  }

  /**
   * The daemon's engine: {@code planner} plans each pass (alerts, advice, remounts besides the
   * reap), and its act stage reaps through its own reaper and grows mounts through
   * {@code remounter} (null: none).
   */
  public static Engine create(Config config, HostPaths paths, Planner planner, Remounter remounter) {
    Observer observer = observer(config, paths, Clock.systemUTC());
    return new Engine(observer, acts(observer, paths, remounter), config.reap().policy(), config.reap().dryRun(), planner,
        new ProcessExits(paths));
  }

  /** This engine's settings with another planner and act stage (tests: an act stage that records). */
  public synchronized Engine with(Planner newPlanner, Actor newActor) {
    return new Engine(observer, newActor, policy, dryRun, newPlanner, exits);
  }

  private static Observer observer(Config config, HostPaths paths, Clock clock) {
    return new Observer(paths, config.autoDiscover(), config.mountPaths(),
        config.namespaces().actInUserNamespaces(), clock, selection(config), config.reap().examineTotal(),
        config.namespaces().reportLimit(), config.runtimes())
        .lookingUpCreators(config.reap().policy().families()::creatorPid)
        .lookingUpTorchManagers(config.reap().policy().families()::registeredWithTorchManager);
  }

  /** The act stage: a full pass's reaper (its confirming pass reads maps and fds), the exit pass's (fd tables only). */
  private static Acts acts(Observer observer, HostPaths paths, Remounter remounter) {
    HolderScanner scanner = observer.holderScanner();
    return new Acts(new Reaper(HolderConfirmer.of(scanner), paths), new Reaper(HolderConfirmer.fdTables(scanner), paths),
        remounter);
  }

  /**
   * Which files a pass keeps per mount: those the reap policy examines, at most
   * {@code reap.examineLimit} of them, the names it may reap before those it only reports
   * ({@link ReapPolicy#mayReap}). Every other file is only counted.
   */
  public static SegmentLister.Selection selection(Config config) {
    ReapPolicy policy = config.reap().policy();
    return new SegmentLister.Selection(policy::examines, config.reap().examineLimit(), policy::mayReap);
  }

  /** Observe and decide; nothing on the host changes. */
  public synchronized Judgement judge() {
    return judge(false);
  }

  private Judgement judge(boolean sameMounts) {
    Snapshot snap = observer.observe(sameMounts, between);
    if (remembered != null) {
      history = remembered.admit(snap, history);
      remembered = null;
    }
    Judgement j = Judge.judge(snap, history, policy);
    history = history.next(snap);
    return j;
  }

  /** Observe, decide and reap what is leaked; {@code forceDryRun} or the configuration's dryRun only reports. */
  public synchronized PassReport clean(boolean forceDryRun) {
    return clean(forceDryRun, false);
  }

  /**
   * The same; with {@code sameMounts}, the mounts of the previous pass are used again (see
   * {@link Observer#observe(boolean)}): the daemon's pass after a holder's exit, where every
   * millisecond is reap delay. The judging pass and the confirming pass still read every process.
   * The plan is the reap alone, whatever planner this engine has (root's dry-run CLEAN asks this
   * of the daemon's engine, and must not disturb what its planner remembers); it raises no alert.
   */
  public synchronized PassReport clean(boolean forceDryRun, boolean sameMounts) {
    return run(forceDryRun, sameMounts, null);
  }

  /**
   * One pass, the daemon's: observe, judge, plan with this engine's planner (the reap alone
   * without one), carry out the plan's reap right after the judgement with nothing between, then
   * its remounts, and report: the outcomes, and the alerts the planner makes of the judgement and
   * of them. Nothing is told to anyone here; the caller hands the report to its outputs.
   */
  public synchronized PassReport pass(boolean forceDryRun, boolean sameMounts) {
    return run(forceDryRun, sameMounts, planner);
  }

  private PassReport run(boolean forceDryRun, boolean sameMounts, Planner planning) {
    long started = System.nanoTime();
    Judgement j = judge(sameMounts);
    boolean dry = forceDryRun || dryRun;
    Plan plan = planning == null ? new Plan(Planner.reaping(j, dry), null) : planning.next(j, dry);
    List<ReapOutcome> outcomes = new ArrayList<>();
    for (Action a : plan.actions()) {
      if (a instanceof Action.Reap r) { // first, at once after the judgement
        outcomes.addAll(actor.reap(r));
      }
    }
    List<RemountOutcome> remounts = new ArrayList<>();
    for (Action a : plan.actions()) {
      if (a instanceof Action.Remount m) {
        RemountOutcome o = grow(m.mount(), null, m.trigger());
        if (o != null) {
          remounts.add(o);
        }
      }
    }
    List<Alert> alerts = planning == null ? List.of()
        : planning.alerts(j, plan, outcomes, remounts, PathWalks.shared().stuckPaths());
    return new PassReport(j, plan, outcomes, remounts, alerts, dry, Duration.ofNanos(System.nanoTime() - started));
  }

  /**
   * A holder's exit as a pass of its own: of the files the processes {@code exited} held in
   * {@code last} (the last full pass's judgement), those {@link ExitVerdict} finds leaked, reaped
   * at once through {@link Actor#reapOnExit} (the identity re-check, a confirming read of every fd
   * table, the write lease, the unlink), and a report of the reaps ({@link PassReport#exitPass}),
   * for the caller to tell at once. Nothing in a dry run, or before a full pass. It lists nothing,
   * reads no maps and judges nothing else: its cost grows with the processes' fd tables only.
   */
  public synchronized Exit exitPass(Judgement last, int[] exited) {
    long started = System.nanoTime();
    if (last == null || dryRun || exited.length == 0) {
      return new Exit(List.of(), false, null);
    }
    ExitVerdict.Decision d = ExitVerdict.decide(last, exited, exits::gone, policy, java.time.Instant.now());
    List<ReapOutcome> outcomes = d.leaked().isEmpty() ? List.of() : actor.reapOnExit(new Action.Reap(d.leaked(), false));
    List<ReapOutcome> reaped = outcomes.stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).toList();
    for (ReapOutcome o : outcomes) {
      if (o.result() != ReapOutcome.Result.REAPED) { // the full pass judges it again, and tells what it finds
        LOG.debug("exit pass: {} left to the full pass ({}): {}", o.candidate().segment().displayName(),
            o.result().label(), o.detail());
      }
    }
    PassReport report = reaped.isEmpty() ? null : PassReport.exitPass(reaped,
        reaped.stream().map(OutcomeAlerts::reaped).toList(), Duration.ofNanos(System.nanoTime() - started));
    return new Exit(outcomes, !d.undecided() && reaped.size() == outcomes.size(), report);
  }

  /**
   * What an exit pass did.
   *
   * @param outcomes one per file it tried to reap
   * @param complete it did all there was for these exits (every file they held is reaped, or
   *     still held by a live process): the full pass may wait until exits are quiet
   * @param report its reaps as a report of their own ({@link PassReport.Kind#EXIT}), to tell at
   *     once; null when it reaped nothing
   */
  public record Exit(List<ReapOutcome> outcomes, boolean complete, PassReport report) {
    public Exit {
      outcomes = List.copyOf(outcomes);
    }

    public long reaped() {
      return report == null ? 0 : report.outcomes().size();
    }
  }

  /**
   * Runs {@code between} between two mounts' listings and every few processes of each pass's
   * observation from now on (the daemon: exit passes that must not wait for a whole sweep). It
   * never runs between the judgement and the reap.
   */
  public void yieldingTo(Runnable between) {
    this.between = between;
  }

  /**
   * Root's remount between passes (REMOUNT over the advice socket): grows {@code mount} through
   * the act stage and reports the outcome with its alert; null when this engine does not remount.
   */
  public synchronized PassReport remount(ShmMount mount, Long sizeBytes, String trigger) {
    RemountOutcome o = grow(mount, sizeBytes, trigger);
    return o == null ? null : PassReport.between(List.of(o), List.of(OutcomeAlerts.remounted(o)));
  }

  /** One remount; one that throws is a failed remount, alerted like any other. */
  private RemountOutcome grow(ShmMount mount, Long sizeBytes, String trigger) {
    try {
      return actor.remount(mount, sizeBytes, trigger);
    } catch (RuntimeException e) {
      LOG.error("the remount of {} failed: {}", mount.displayName(), e.toString(), e);
      return new RemountOutcome(RemountOutcome.Result.FAILED, mount.displayName(), 0, 0, e.toString(), "", "");
    }
  }

  /**
   * Carries out a planned reap through this engine's act stage: its confirming /proc pass, and for
   * each candidate the identity re-check and the lease before the unlink.
   */
  public List<ReapOutcome> reap(Action.Reap r) {
    return actor.reap(r);
  }

  /**
   * Takes {@code fresh}'s settings (a reloaded configuration: what it observes, examines, reaps
   * and whether it only reports), keeping what this engine learned: the holder history. The next
   * pass discovers the mounts afresh.
   */
  public synchronized void adopt(Engine fresh) {
    observer = fresh.observer;
    if (actor instanceof Acts mine && fresh.actor instanceof Acts theirs) {
      actor = mine.reapingWith(theirs);
    }
    policy = fresh.policy;
    dryRun = fresh.dryRun;
  }

  /**
   * What a daemon before a restart saw hold which file; the next judgement takes what the host
   * still matches ({@link RememberedHolders#admit}), so a leak it knew is reaped at once.
   */
  public synchronized void remember(RememberedHolders before) {
    remembered = before;
  }

  /** The act stage this engine carries its plans out with. */
  public Actor actor() {
    return actor;
  }

  /** Who each examined segment was last seen held by, as of the last pass: what a restart should remember. */
  public HolderHistory history() {
    return history;
  }

  /** True when every pass only reports (reap.dryRun, or the daemon's --dry-run): nothing is unlinked. */
  public boolean dryRun() {
    return dryRun;
  }

  public ReapPolicy policy() {
    return policy;
  }
}
