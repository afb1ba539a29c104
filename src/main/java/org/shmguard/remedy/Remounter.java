package org.shmguard.remedy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountReach;
import org.shmguard.host.MountEntry;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.MountHandle;
import org.shmguard.text.Bytes;
import org.shmguard.policy.RemountPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grows a shm tmpfs, as {@link RemountPolicy} allows, changing its size and nothing else. It
 * opens the mount's root through the path it was found by (a host path, or
 * /proc/PID/root/dev/shm for a tmpfs only a container has), checks on that handle that it is
 * the very mount that was judged (mount id and device), and sets size= on that handle's
 * superblock with the new mount API (fspick, fsconfig): no mount flag is passed, so none can
 * change and nothing can become read-only, and no options are read from anywhere to be passed
 * back. Logs before and after, and checks after that only the size changed.
 *
 * <pre>{@code
 * Remounter r = Remounter.create(config.remount(), HostPaths.system(), Clock.systemUTC());
 * RemountOutcome o = r.onCritical(mount);
 * }</pre>
 */
public final class Remounter {
  private static final Logger LOG = LoggerFactory.getLogger(Remounter.class);
  private volatile RemountPolicy policy;
  private final long ramBytes;
  private final Clock clock;
  /** When each mount was last remounted (or tried), by its identity: see {@link MountKey}. */
  private final Map<MountKey, Instant> lastRemount = new ConcurrentHashMap<>();
  private volatile boolean dryRun;

  public Remounter(RemountPolicy policy, long ramBytes, Clock clock) {
    this.policy = policy;
    this.ramBytes = ramBytes;
    this.clock = clock;
  }

  /** A remounter for the configuration's remount section, with the host's memory from /proc/meminfo. */
  public static Remounter create(org.shmguard.config.Config.Remount c, HostPaths paths, Clock clock) throws IOException {
    return new Remounter(c.policy(), memTotal(paths), clock);
  }

  /**
   * In a dry run (the daemon's --dry-run, reap.dryRun) the policy still decides, and a remount it
   * would make is logged and reported as refused ("dry run: would grow ..."); nothing is remounted.
   */
  public Remounter dryRun(boolean on) {
    this.dryRun = on;
    return this;
  }

  /** Decides with {@code newPolicy} from now on (a reloaded configuration); each mount's cooldown goes on. */
  public synchronized void reconfigure(RemountPolicy newPolicy, boolean newDryRun) {
    this.policy = newPolicy;
    this.dryRun = newDryRun;
  }

  /** The policy it decides with now (a reload may change it). */
  public RemountPolicy policy() {
    return policy;
  }

  /** The host's memory, which percentages of the policy are of. */
  public long ramBytes() {
    return ramBytes;
  }

  /**
   * Forgets when {@code dev} was last remounted: for a tmpfs made moments ago (a starting
   * container's), whose anonymous device number the kernel may have reused from a tmpfs removed
   * since, and whose cooldown that was.
   */
  public void forget(Dev dev) {
    lastRemount.keySet().removeIf(k -> k.dev().equals(dev));
  }

  /**
   * A mount, as its cooldown is kept: its device number and mountinfo id, which the kernel reuses
   * for a tmpfs made after this one is gone, and, where the kernel has it (Linux 6.8), its unique
   * mount id, which it never reuses. With the unique id, a new container's tmpfs never inherits the
   * cooldown of one removed before it; without it, {@link #forget} does that for the tmpfs the OCI
   * hook sizes at a container's start, and a tmpfs found later can inherit a cooldown only if both
   * its device number and its mount id are a removed one's.
   */
  record MountKey(Dev dev, long mountId, long uniqueId) {}

  private static MountKey key(ShmMount mount, MountHandle h) throws IOException {
    return new MountKey(mount.dev(), mount.mountId(), h.uniqueMountId());
  }

  /** What the daemon calls when a mount passes its critical threshold: grow it to the configured target. */
  public RemountOutcome onCritical(ShmMount mount) {
    return grow(mount, null, "it passed the critical threshold");
  }

  /** Grows {@code mount} to {@code requestedBytes}, or (null) the configured target, if the policy allows. */
  public synchronized RemountOutcome grow(ShmMount mount, Long requestedBytes, String trigger) {
    return attempt(mount, requestedBytes, trigger);
  }

  /** One attempt; its outcome is data (the engine's report carries it to the alerts and the metrics). */
  private RemountOutcome attempt(ShmMount mount, Long requestedBytes, String trigger) {
    String name = mount.displayName();
    if (!mount.mayAct()) {
      String why = "shmguard only reports this mount: " + mount.reportOnly();
      return new RemountOutcome(RemountOutcome.Result.REFUSED, name, 0, 0, why, "", "");
    }
    try (MountHandle h = MountReach.open(mount)) {
      MountEntry before = entry(mount);
      if (before == null) {
        return new RemountOutcome(RemountOutcome.Result.FAILED, name, 0, 0, "it is no longer mounted where it was found", "", "");
      }
      FsUsage usage = h.usage();
      Instant now = clock.instant();
      MountKey key = key(mount, h);
      RemountPolicy.Decision d = policy.decide(usage.sizeBytes(), usage.usedBytes(), requestedBytes, ramBytes,
          lastRemount.get(key), now);
      String opts = options(before);
      if (!d.grow()) {
        return new RemountOutcome(RemountOutcome.Result.REFUSED, name, d.fromBytes(), d.fromBytes(), d.reason(), opts, opts);
      }
      if (dryRun) {
        String would = "dry run: would " + d.reason() + " (" + Bytes.human(usage.usedBytes()) + " used); nothing remounted";
        return new RemountOutcome(RemountOutcome.Result.REFUSED, name, d.fromBytes(), d.fromBytes(), would, opts, opts);
      }
      lastRemount.put(key, now);
      try {
        h.reconfigureSize(d.toBytes());
      } catch (IOException e) {
        LOG.error("remount of {} failed: {}", name, e.getMessage());
        return new RemountOutcome(RemountOutcome.Result.FAILED, name, d.fromBytes(), d.fromBytes(), e.getMessage(), opts, opts);
      }
      MountEntry after = entry(mount);
      String optsAfter = after == null ? "(gone)" : options(after);
      long sizeAfter = h.usage().sizeBytes();
      if (sizeAfter != d.toBytes()) {
        LOG.error("after the remount of {}, its size is {} bytes, not the {} asked for", name, sizeAfter, d.toBytes());
      }
      String changed = changedBesidesSize(before, after);
      if (changed != null || !MountReach.leadsTo(mount.path(), mount.mountId(), mount.dev())) {
        LOG.error("after the remount of {}, {}", name, changed != null ? changed
            : mount.path() + " no longer leads to mount " + mount.mountId());
      }
      // The remount_grown event is the one line for it: what asked (its SHM_REASON), from what to what, the options after.
      return new RemountOutcome(RemountOutcome.Result.GROWN, name, d.fromBytes(), sizeAfter, trigger + ": " + d.reason() + ", "
          + Bytes.human(usage.usedBytes()) + " used", opts, optsAfter);
    } catch (IOException e) {
      LOG.error("cannot remount {}: {}", name, e.getMessage());
      return new RemountOutcome(RemountOutcome.Result.FAILED, name, 0, 0, e.getMessage(), "", "");
    }
  }

  /**
   * The mount's line in the mountinfo it was found in, by mount id: the judged mount itself,
   * whatever else is mounted at its mount point now.
   */
  private static MountEntry entry(ShmMount mount) {
    if (mount.mountinfo() == null) {
      return null;
    }
    try {
      // Bytes that are not UTF-8 (a user's mount point) are replaced, not refused, as discovery reads them.
      String text = new String(Files.readAllBytes(Path.of(mount.mountinfo())), StandardCharsets.UTF_8);
      for (MountEntry e : MountEntry.parseAll(text)) {
        if (e.mountId() == mount.mountId() && e.dev().equals(mount.dev()) && e.root().equals("/")) {
          return e;
        }
      }
    } catch (IOException e) {
      // the process it was read through exited: the mount is no longer known
    }
    return null;
  }

  /** What changed between two lines of the same mount besides its size, or null when nothing did. */
  static String changedBesidesSize(MountEntry before, MountEntry after) {
    if (after == null) {
      return "it is gone from its mountinfo";
    }
    if (!before.mountOptions().equals(after.mountOptions())) {
      return "its mount options changed from " + before.mountOptions() + " to " + after.mountOptions();
    }
    String b = withoutSize(before.superOptions());
    String a = withoutSize(after.superOptions());
    return b.equals(a) ? null : "its filesystem options changed from " + b + " to " + a + " (size aside)";
  }

  private static String withoutSize(String superOptions) {
    return String.join(",", Arrays.stream(superOptions.split(",")).filter(w -> !w.startsWith("size=")).toList());
  }

  private static String options(MountEntry e) {
    return e.mountOptions() + " " + e.superOptions();
  }

  /** MemTotal from /proc/meminfo, in bytes. */
  static long memTotal(HostPaths paths) throws IOException {
    for (String line : Files.readAllLines(paths.proc("meminfo"))) {
      if (line.startsWith("MemTotal:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no MemTotal in " + paths.proc("meminfo"));
  }
}
