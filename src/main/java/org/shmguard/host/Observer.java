package org.shmguard.host;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Coverage;
import org.shmguard.model.Dev;
import org.shmguard.model.MountContents;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;

/**
 * The observe stage: mounts, their segments, one /proc pass for holders, capacity, frozen into a
 * {@link Snapshot}. It reads the host and decides nothing. Memory is bounded for the whole host:
 * the mounts shmguard acts in are listed within an {@link ExamineBudget}, the ones it only reports
 * are measured and never listed, and discovery looks at a bounded number of users' namespaces.
 *
 * <pre>{@code
 * Observer observer = new Observer(HostPaths.system(), true, List.of(), Clock.systemUTC());
 * Snapshot snap = observer.observe();
 * }</pre>
 */
public final class Observer {
  /** reap.examineLimit's shipped default. */
  public static final int DEFAULT_LIMIT = 10_000;
  /** reap.examineTotal's shipped default. */
  public static final int DEFAULT_TOTAL = 10_000;
  private final MountDiscovery discovery;
  private final SegmentLister lister;
  private final HolderScanner holders;
  private final ProcessDetails details;
  private final boolean auto;
  private final List<String> configured;
  private final Clock clock;
  private final int examineTotal;
  private final int reportLimit;
  private final PathWalks walks = PathWalks.shared();
  private final CreatorLookup creators;
  /** The creator pid a file's name gives, if any: the pids looked up in every PID namespace. */
  private java.util.function.Function<String, java.util.OptionalInt> creatorPid = name -> java.util.OptionalInt.empty();
  private final TorchManagerLookup torchManagers;
  /** Whether a file of this name may be registered with a torch_shm_manager: the managers are looked for when one is unheld. */
  private java.util.function.Predicate<String> torchManaged = name -> false;
  private MountDiscovery.Result lastFound;
  /** The previous pass's holders: files held then are kept apart from the oldest unheld (see SegmentLister). */
  private org.shmguard.model.HolderIndex lastHolders = org.shmguard.model.HolderIndex.empty();

  /** An observer that keeps every regular file, up to {@link #DEFAULT_LIMIT} per mount: for tools that judge names themselves. */
  public Observer(HostPaths paths, boolean auto, List<String> configured, Clock clock) {
    this(paths, auto, configured, false, clock, SegmentLister.Selection.everything(DEFAULT_LIMIT));
  }

  /**
   * @param actInUserNamespaces see {@link MountDiscovery#MountDiscovery(HostPaths, boolean)}
   * @param selection which files each mount's listing keeps, and how many at most
   */
  public Observer(HostPaths paths, boolean auto, List<String> configured, boolean actInUserNamespaces, Clock clock,
      SegmentLister.Selection selection) {
    this(paths, auto, configured, actInUserNamespaces, clock, selection, Math.max(DEFAULT_TOTAL, selection.limit()),
        MountDiscovery.DEFAULT_REPORT_LIMIT);
  }

  /**
   * @param examineTotal the most files a pass keeps over all mounts ({@link ExamineBudget})
   * @param reportLimit the most namespaces of other user namespaces a pass reports ({@link MountDiscovery})
   */
  public Observer(HostPaths paths, boolean auto, List<String> configured, boolean actInUserNamespaces, Clock clock,
      SegmentLister.Selection selection, int examineTotal, int reportLimit) {
    this(paths, auto, configured, actInUserNamespaces, clock, selection, examineTotal, reportLimit, RuntimeRoots.DEFAULTS);
  }

  /** @param runtimes where pods' and containers' shm tmpfs are looked for on the host ({@link MountDiscovery}) */
  public Observer(HostPaths paths, boolean auto, List<String> configured, boolean actInUserNamespaces, Clock clock,
      SegmentLister.Selection selection, int examineTotal, int reportLimit, RuntimeRoots runtimes) {
    this.examineTotal = examineTotal;
    this.reportLimit = reportLimit;
    this.discovery = new MountDiscovery(paths, actInUserNamespaces, reportLimit, runtimes);
    this.lister = new SegmentLister(selection);
    this.holders = new HolderScanner(paths);
    this.details = new ProcessDetails(paths);
    this.creators = new CreatorLookup(paths);
    this.torchManagers = new TorchManagerLookup(paths);
    this.auto = auto;
    this.configured = List.copyOf(configured);
    this.clock = clock;
  }

  /**
   * Looks up, on every pass, the live processes that may have made the unheld files whose names
   * {@code namePid} gives a creator pid for ({@link CreatorLookup}); without it none is looked up.
   */
  public Observer lookingUpCreators(java.util.function.Function<String, java.util.OptionalInt> namePid) {
    this.creatorPid = java.util.Objects.requireNonNull(namePid, "namePid");
    return this;
  }

  /**
   * Looks up, on every pass that finds an unheld file {@code registered} says a
   * {@code torch_shm_manager} may keep, the live managers and whom they serve ({@link TorchManagerLookup}).
   */
  public Observer lookingUpTorchManagers(java.util.function.Predicate<String> registered) {
    this.torchManaged = java.util.Objects.requireNonNull(registered, "registered");
    return this;
  }

  public HolderScanner holderScanner() {
    return holders;
  }

  public Snapshot observe() {
    return observe(false);
  }

  /**
   * A snapshot; with {@code sameMounts}, the mounts found by the previous call are used again
   * instead of reading every process's mount namespace. For a pass that only a holder's exit
   * triggered: an exit creates no mount. Segments and holders are read afresh either way, and
   * each mount's device is checked again when it is listed.
   */
  public Snapshot observe(boolean sameMounts) {
    return observe(sameMounts, () -> { });
  }

  /**
   * The same, calling {@code between} between two mounts' listings and every few processes of
   * the /proc pass ({@link HolderScanner#scan(java.util.Collection, long[], Runnable)}): where the
   * daemon's full pass lets a holder's exit be reaped without waiting for the whole pass. What
   * {@code between} does must not depend on this snapshot, which is not finished.
   */
  public Snapshot observe(boolean sameMounts, Runnable between) {
    var takenAt = clock.instant();
    MountDiscovery.Result found = sameMounts && lastFound != null ? lastFound : discovery.discover(auto, configured);
    lastFound = found;
    List<String> warnings = new ArrayList<>(found.warnings());
    // Mounts are shown in discovery order; listed in the budget's (the host's first).
    Map<Dev, ShmMount> shown = new HashMap<>();
    List<Segment> segments = new ArrayList<>();
    List<MountContents> contents = new ArrayList<>();
    Set<Dev> devs = new LinkedHashSet<>();
    ExamineBudget budget = new ExamineBudget(found.mounts(), lister.limit(), examineTotal);
    for (ShmMount m : budget.listed()) {
      between.run();
      Reached reached;
      try {
        // One bounded walk per mount: opening its root and statvfs both walk its path, which may
        // cross a filesystem that stops answering. Listing through the verified handle does not.
        reached = walks.run(m.path(), () -> {
          List<String> problems = new ArrayList<>();
          SegmentLister.Opened opened = lister.open(m);
          return new Reached(opened, opened.problem() == null ? usage(m, problems) : null, problems);
        });
      } catch (IOException e) {
        warnings.add(m.displayName() + " is not listed in this pass: " + e.getMessage());
        budget.skipped();
        continue;
      }
      if (reached.opened().problem() != null) {
        warnings.add(reached.opened().problem());
        budget.skipped();
        continue;
      }
      SegmentLister.Listing listing;
      try (DirHandle dir = reached.opened().dir()) {
        listing = lister.list(m, dir, lastHolders::isHeld, budget.shareOf(m));
      }
      if (listing.problem() != null) {
        warnings.add(listing.problem());
        budget.skipped();
        continue;
      }
      budget.used(listing.keptOldest(), listing.keptApart());
      warnings.addAll(reached.problems());
      segments.addAll(listing.segments());
      contents.add(listing.contents());
      shown.put(m.dev(), m.withUsage(reached.usage()));
      devs.add(m.dev());
    }
    Measured reportOnly = measureReportOnly(found.mounts(), shown, warnings);
    List<ShmMount> mounts = new ArrayList<>();
    for (ShmMount m : found.mounts()) {
      if (shown.containsKey(m.dev())) {
        mounts.add(shown.get(m.dev()));
      }
    }
    HolderPass pass = holders.scan(devs, segments.stream().mapToLong(Segment::ino).toArray(), between);
    lastHolders = pass.index();
    Map<Integer, ProcessInfo> infos = new HashMap<>();
    for (int pid : pass.index().pids()) {
      ProcessInfo info = details.read(pid);
      if (info != null) {
        infos.put(pid, info);
      }
    }
    Set<Integer> named = new java.util.HashSet<>();
    Set<Dev> namedOn = new java.util.HashSet<>();
    Set<Dev> managedOn = new java.util.HashSet<>();
    for (Segment s : segments) {
      if (pass.index().isHeld(s.key())) {
        continue;
      }
      java.util.OptionalInt pid = creatorPid.apply(s.nameText());
      if (pid.isPresent()) {
        named.add(pid.getAsInt());
        namedOn.add(s.mountDev());
      }
      if (torchManaged.test(s.nameText())) {
        managedOn.add(s.mountDev());
      }
    }
    org.shmguard.model.TorchManagers managers = managedOn.isEmpty() ? org.shmguard.model.TorchManagers.none()
        : torchManagers.find(pass.livePids(), managedOn);
    Coverage coverage = new Coverage(examineTotal, segments.size(), reportOnly.mounts(), reportOnly.files(),
        found.namespacesLeftOut(), reportLimit);
    return new Snapshot(takenAt, mounts, segments, pass.index(), pass.livePids(), infos, pass.problems(),
        warnings, PidNamespace.isInitial(), pass.processes(), contents,
        creators.find(named, pass.livePids(), namedOn), coverage, managers, found.shmOfNamespace());
  }

  /** How many report-only mounts were measured, and the files their statvfs counts. */
  private record Measured(int mounts, long files) {}

  /**
   * Mounts shmguard only reports cost the least: a statvfs each (through a bounded walk), no
   * listing, no per-file record, no place in the /proc pass. What their files are is their
   * owner's business; how full they are is reported.
   */
  private Measured measureReportOnly(List<ShmMount> found, Map<Dev, ShmMount> shown, List<String> warnings) {
    int mounts = 0;
    long files = 0;
    for (ShmMount m : found) {
      if (m.mayAct()) {
        continue;
      }
      List<String> problems = new ArrayList<>();
      ShmMount.Usage u;
      try {
        u = walks.run(m.path(), () -> usage(m, problems));
      } catch (IOException e) {
        warnings.add(m.displayName() + " is not measured in this pass: " + e.getMessage());
        continue;
      }
      warnings.addAll(problems);
      mounts++;
      if (u != null) {
        files += Math.max(0, u.inodes() - u.freeInodes() - 1); // less the root directory
      }
      shown.put(m.dev(), m.withUsage(u));
    }
    return new Measured(mounts, files);
  }

  /** What a bounded walk reached; a walk that answers after its deadline has its handle closed by {@link PathWalks}. */
  private record Reached(SegmentLister.Opened opened, ShmMount.Usage usage, List<String> problems) implements AutoCloseable {
    @Override
    public void close() {
      if (opened.dir() != null) {
        opened.dir().close();
      }
    }
  }

  private static ShmMount.Usage usage(ShmMount m, List<String> warnings) {
    try {
      FsUsage u = Linux.get().statvfs(m.path());
      return new ShmMount.Usage(u.sizeBytes(), u.usedBytes(), u.availableBytes(), u.inodes(), u.freeInodes());
    } catch (IOException e) {
      warnings.add("cannot measure " + m.path() + ": " + e.getMessage());
      return null;
    }
  }
}
