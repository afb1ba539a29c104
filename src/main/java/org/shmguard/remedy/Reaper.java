package org.shmguard.remedy;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountReach;
import org.shmguard.host.PathWalks;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderRef;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.policy.Action;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.ReapPlan;

/**
 * The act stage for segments: runs a confirming /proc pass, then, through a handle checked to be
 * the root of the very mount that was judged (mount id and device), re-checks for each candidate
 * that the file is still the one judged (device, inode, ctime, one link, a regular file), and
 * leaves the last check and the unlink to {@link LeasedUnlink}: a write lease, which the kernel
 * grants only if nothing at all has the file open, held while the name is moved out of reach,
 * checked, and unlinked. In a dry run the lease is taken and released, and nothing is renamed or
 * unlinked.
 *
 * <pre>{@code
 * List<ReapOutcome> done = new Reaper(observer.holderScanner()::scan).carry(reapAction);
 * }</pre>
 */
public final class Reaper {
  private final HolderConfirmer confirmer;
  private final Linux linux;
  private final LeasedUnlink lastCheck;

  public Reaper(HolderConfirmer confirmer) {
    this(confirmer, HostPaths.system());
  }

  /** With the host's /proc at {@code paths}, where the last check looks for mounts of a file. */
  public Reaper(HolderConfirmer confirmer, HostPaths paths) {
    this(confirmer, Linux.get(), new LeasedUnlink(paths));
  }

  Reaper(HolderConfirmer confirmer, Linux linux) {
    this(confirmer, linux, new LeasedUnlink(HostPaths.system()));
  }

  private Reaper(HolderConfirmer confirmer, Linux linux, LeasedUnlink lastCheck) {
    this.confirmer = confirmer;
    this.linux = linux;
    this.lastCheck = lastCheck;
  }

  /** Carries out a planned reap (confirming pass, re-check, lease, unlink): one outcome per candidate, grouped by mount. */
  public List<ReapOutcome> carry(Action.Reap reap) {
    return execute(new ReapPlan(reap.candidates(), List.of()), reap.dryRun());
  }

  public List<ReapOutcome> execute(ReapPlan plan, boolean dryRun) {
    if (plan.isEmpty()) {
      return List.of();
    }
    Map<Dev, List<Assessment>> byMount = new LinkedHashMap<>();
    Set<Dev> devs = new LinkedHashSet<>();
    for (Assessment a : plan.candidates()) {
      byMount.computeIfAbsent(a.segment().mountDev(), d -> new ArrayList<>()).add(a);
      devs.add(a.segment().mountDev());
    }
    HolderPass confirm = confirmer.confirm(devs, plan.candidates().stream().mapToLong(a -> a.segment().ino()).toArray());
    List<ReapOutcome> outcomes = new ArrayList<>();
    if (!confirm.complete()) {
      String why = ReapOutcome.INCOMPLETE_PASS + ": " + String.join("; ", confirm.problems());
      plan.candidates().forEach(a -> outcomes.add(new ReapOutcome(a, ReapOutcome.Result.SKIPPED, why)));
      return outcomes;
    }
    for (List<Assessment> group : byMount.values()) {
      reapInMount(group, confirm, dryRun, outcomes);
    }
    return outcomes;
  }

  private void reapInMount(List<Assessment> group, HolderPass confirm, boolean dryRun, List<ReapOutcome> out) {
    ShmMount mount = group.get(0).mount();
    if (!mount.mayAct()) {
      String why = "shmguard only reports " + mount.displayName() + ": " + mount.reportOnly();
      group.forEach(a -> out.add(new ReapOutcome(a, ReapOutcome.Result.SKIPPED, why)));
      return;
    }
    // The path may walk through a namespace's root whose filesystem stopped answering: bounded.
    try (DirHandle dir = PathWalks.shared().run(mount.path(), () -> linux.openDirectory(mount.path()))) {
      // Every unlink below is relative to this handle: once it is the judged mount's root, a path
      // that changes afterwards cannot redirect one.
      String why = MountReach.mismatch(dir.identity(), mount);
      if (why != null) {
        group.forEach(a -> out.add(new ReapOutcome(a, ReapOutcome.Result.SKIPPED, why)));
        return;
      }
      // Cheap checks first, file by file; the survivors go through the lease together.
      ReapOutcome[] done = new ReapOutcome[group.size()];
      List<Integer> leased = new ArrayList<>();
      List<LeasedUnlink.Job> jobs = new ArrayList<>();
      for (int i = 0; i < group.size(); i++) {
        Assessment a = group.get(i);
        done[i] = precheck(dir, a, confirm);
        if (done[i] == null) {
          leased.add(i);
          jobs.add(new LeasedUnlink.Job(a.segment(), a.reason(), refusedBecause(confirm.index().hints(a.segment().ino()))));
        }
      }
      List<LeasedUnlink.Done> last = lastCheck.reap(dir, jobs, dryRun);
      for (int k = 0; k < leased.size(); k++) {
        int i = leased.get(k);
        done[i] = new ReapOutcome(group.get(i), last.get(k).result(), last.get(k).detail());
      }
      out.addAll(List.of(done));
    } catch (IOException e) {
      String why = "cannot open " + mount.path() + ": " + e.getMessage();
      group.forEach(a -> out.add(new ReapOutcome(a, ReapOutcome.Result.FAILED, why)));
    }
  }

  /** The checks before the lease: no holder in the confirming pass, the same file by name; null if it passes. */
  private static ReapOutcome precheck(DirHandle dir, Assessment a, HolderPass confirm) {
    Segment s = a.segment();
    List<HolderRef> now = confirm.index().holders(s.key());
    if (!now.isEmpty()) {
      return new ReapOutcome(a, ReapOutcome.Result.SKIPPED, "it gained a holder: pid " + now.get(0).pid());
    }
    StatxResult st;
    try {
      st = dir.lstat(s.name());
    } catch (NoSuchFileException e) {
      return new ReapOutcome(a, ReapOutcome.Result.SKIPPED, "it is already gone");
    } catch (IOException e) {
      return new ReapOutcome(a, ReapOutcome.Result.FAILED, e.getMessage());
    }
    String changed = changedSince(s, st);
    return changed == null ? null : new ReapOutcome(a, ReapOutcome.Result.SKIPPED, changed);
  }

  /**
   * What a refused lease may be due to: an fd (not O_PATH) on a mount no mountinfo lists, with the
   * file's inode number. Such an fd holds nothing by itself (any user can make ones with every small
   * inode number), but where it is the file, the lease sees it and is refused. Null if there is none.
   */
  static String refusedBecause(List<HolderRef> hints) {
    if (hints.isEmpty()) {
      return null;
    }
    return "an " + hints.get(0).access().label() + ", pid " + hints.get(0).pid() + ", may be it"
        + (hints.size() > 1 ? " (and " + (hints.size() - 1) + " more)" : "");
  }

  /** Why the file on disk is no longer the one that was judged, or null if it still is. */
  static String changedSince(Segment s, StatxResult st) {
    if (!st.isRegularFile()) {
      return "it is no longer a regular file";
    }
    if (st.devMajor() != s.mountDev().major() || st.devMinor() != s.mountDev().minor() || st.ino() != s.ino()) {
      return "the name now leads to a different file";
    }
    long ctime = st.ctimeSec() * 1_000_000_000L + st.ctimeNsec();
    if (ctime != s.ctimeNanos()) {
      return "it changed since it was judged";
    }
    if (st.nlink() != 1) {
      return "it has " + st.nlink() + " links now";
    }
    return null;
  }
}
