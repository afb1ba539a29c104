package org.shmguard.engine;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.shmguard.config.Config;
import org.shmguard.host.HostPaths;
import org.shmguard.host.Observer;
import org.shmguard.host.SegmentLister;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Action;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.Planner;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.RememberedHolders;
import org.shmguard.remedy.HolderConfirmer;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;

/**
 * The pipeline, observe then decide then act, shared by the one-shot commands and the daemon:
 * observe, judge, plan, and carry out the plan's {@link Action.Reap} through the {@link Reaper}
 * at once. It keeps the holder history between passes, so a long-lived engine reaps a segment as
 * soon as its last holder exits.
 *
 * <pre>{@code
 * Engine engine = Engine.create(config, HostPaths.system());
 * Engine.Pass pass = engine.clean(false);
 * }</pre>
 */
public final class Engine {
  // Replaced together by adopt() (a reloaded configuration), under this engine's lock.
  private Observer observer;
  private volatile Reaper reaper;
  private volatile ReapPolicy policy;
  private volatile boolean dryRun;
  /** Read by the daemon's state keeper without the lock: a pass stuck in the kernel holds it. */
  private volatile HolderHistory history = HolderHistory.empty();
  /** What a daemon before a restart saw hold which file: admitted at the next judgement, then dropped. */
  private RememberedHolders remembered;

  Engine(Observer observer, Reaper reaper, ReapPolicy policy, boolean dryRun) {
    this.observer = observer;
    this.reaper = reaper;
    this.policy = policy;
    this.dryRun = dryRun;
  }

  public static Engine create(Config config, HostPaths paths) {
    return create(config, paths, Clock.systemUTC());
  }

  public static Engine create(Config config, HostPaths paths, Clock clock) {
    Observer observer = new Observer(paths, config.autoDiscover(), config.mountPaths(),
        config.namespaces().actInUserNamespaces(), clock, selection(config), config.reap().examineTotal(),
        config.namespaces().reportLimit(), config.runtimes())
        .lookingUpCreators(config.reap().policy().families()::creatorPid);
    return new Engine(observer, new Reaper(HolderConfirmer.of(observer.holderScanner()), paths), config.reap().policy(),
        config.reap().dryRun());
  }

  /**
   * Which files a pass keeps per mount: those the reap policy examines, the oldest
   * {@code reap.examineLimit} of them. Every other file is only counted.
   */
  public static SegmentLister.Selection selection(Config config) {
    ReapPolicy policy = config.reap().policy();
    return new SegmentLister.Selection(policy::examines, config.reap().examineLimit());
  }

  /**
   * One judgement and, when reaping ran, what was done.
   *
   * @param took how long the whole pass took: observe, judge, plan, and reap with its confirming pass
   */
  public record Pass(Judgement judgement, List<ReapOutcome> outcomes, boolean dryRun, java.time.Duration took) {
    public Pass {
      outcomes = List.copyOf(outcomes);
    }
  }

  /**
   * A pass and the plan it was carried out from.
   *
   * @param plan the whole plan; its {@link Action.Reap} has been carried out (the pass's
   *     outcomes), every other action is for the caller's act stage
   */
  public record Planned(Pass pass, Plan plan) {}

  /** Observe and decide; nothing on the host changes. */
  public synchronized Judgement judge() {
    return judge(false);
  }

  private Judgement judge(boolean sameMounts) {
    Snapshot snap = observer.observe(sameMounts);
    if (remembered != null) {
      history = remembered.admit(snap, history);
      remembered = null;
    }
    Judgement j = Judge.judge(snap, history, policy);
    history = history.next(snap);
    return j;
  }

  /** Observe, decide and reap what is leaked; {@code forceDryRun} or the configuration's dryRun only reports. */
  public synchronized Pass clean(boolean forceDryRun) {
    return clean(forceDryRun, false);
  }

  /**
   * The same; with {@code sameMounts}, the mounts of the previous pass are used again (see
   * {@link Observer#observe(boolean)}): the daemon's pass after a holder's exit, where every
   * millisecond is reap delay. The judging pass and the confirming pass still read every process.
   */
  public synchronized Pass clean(boolean forceDryRun, boolean sameMounts) {
    return pass(forceDryRun, sameMounts, (j, dry) -> new Plan(Planner.reaping(j, dry), null), this::reap).pass();
  }

  /**
   * One pass: observe, judge, have {@code planner} plan from the judgement (told whether this is
   * a dry run), and carry out the plan's reaps with {@code act} right after, with nothing else in
   * between. The one-shot {@code clean} plans only the reap and carries it out with
   * {@link #reap}; the daemon plans everything and carries the reap out through its act stage,
   * which calls {@link #reap} in turn.
   */
  public synchronized Planned pass(boolean forceDryRun, boolean sameMounts, BiFunction<Judgement, Boolean, Plan> planner,
      Function<Action.Reap, List<ReapOutcome>> act) {
    long started = System.nanoTime();
    Judgement j = judge(sameMounts);
    boolean dry = forceDryRun || dryRun;
    Plan plan = planner.apply(j, dry);
    List<ReapOutcome> outcomes = new ArrayList<>();
    for (Action a : plan.actions()) {
      if (a instanceof Action.Reap r) {
        outcomes.addAll(act.apply(r));
      }
    }
    return new Planned(new Pass(j, outcomes, dry, java.time.Duration.ofNanos(System.nanoTime() - started)), plan);
  }

  /**
   * Carries out a planned reap through the {@link Reaper}: its confirming /proc pass, and for each
   * candidate the identity re-check and the lease before the unlink. The act code for every reap,
   * the one-shot {@code clean}'s and the daemon's.
   */
  public List<ReapOutcome> reap(Action.Reap r) {
    return reaper.carry(r);
  }

  /**
   * Takes {@code fresh}'s settings (a reloaded configuration: what it observes, examines, reaps
   * and whether it only reports), keeping what this engine learned: the holder history. The next
   * pass discovers the mounts afresh.
   */
  public synchronized void adopt(Engine fresh) {
    observer = fresh.observer;
    reaper = fresh.reaper;
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
