package org.shmguard.remedy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.shmguard.host.HostPaths;
import org.shmguard.host.PathWalks;
import org.shmguard.host.MountEntry;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.MountCalls;
import org.shmguard.policy.RemountPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grows a shm tmpfs by remount, as {@link RemountPolicy} allows, keeping every other option: a
 * mount this process's namespace holds through mount(2) with MS_REMOUNT, a tmpfs that only a
 * container's mount namespace holds through {@code nsenter -t PID -m mount -o remount,...}
 * (a multi-threaded JVM cannot setns into a mount namespace). Logs before and after.
 *
 * <pre>{@code
 * Remounter r = Remounter.create(config.remount(), HostPaths.system(), Clock.systemUTC());
 * RemountOutcome o = r.onCritical(mount);
 * }</pre>
 */
public final class Remounter {
  private static final Logger LOG = LoggerFactory.getLogger(Remounter.class);
  private final RemountPolicy policy;
  private final HostPaths paths;
  private final long ramBytes;
  private final Clock clock;
  private final Map<Dev, Instant> lastRemount = new ConcurrentHashMap<>();
  private volatile Consumer<RemountOutcome> listener = o -> {};

  public Remounter(RemountPolicy policy, HostPaths paths, long ramBytes, Clock clock) {
    this.policy = policy;
    this.paths = paths;
    this.ramBytes = ramBytes;
    this.clock = clock;
  }

  /** A remounter for the configuration's remount section, with the host's memory from /proc/meminfo. */
  public static Remounter create(org.shmguard.config.Config.Remount c, HostPaths paths, Clock clock) throws IOException {
    return new Remounter(new RemountPolicy(c.enabled(), c.targetSize(), c.maxSize(), c.cooldown()), paths, memTotal(paths), clock);
  }

  /** Told every outcome after it is logged: where the daemon's journal sink listens. */
  public void onOutcome(Consumer<RemountOutcome> l) {
    this.listener = l;
  }

  /** What the daemon calls when a mount passes its critical threshold: grow it to the configured target. */
  public RemountOutcome onCritical(ShmMount mount) {
    return grow(mount, null, "it passed the critical threshold");
  }

  /** Grows {@code mount} to {@code requestedBytes}, or (null) the configured target, if the policy allows. */
  public synchronized RemountOutcome grow(ShmMount mount, Long requestedBytes, String trigger) {
    RemountOutcome o = attempt(mount, requestedBytes, trigger);
    listener.accept(o);
    return o;
  }

  private RemountOutcome attempt(ShmMount mount, Long requestedBytes, String trigger) {
    String name = mount.displayName();
    boolean inContainer = reachedThroughProc(mount);
    MountEntry before = entry(mount, inContainer);
    if (before == null) {
      return new RemountOutcome(RemountOutcome.Result.FAILED, name, 0, 0, "it is no longer mounted where it was found", "", "");
    }
    FsUsage usage;
    try {
      usage = PathWalks.shared().run(mount.path(), () -> Linux.get().statvfs(mount.path()));
    } catch (IOException e) {
      return new RemountOutcome(RemountOutcome.Result.FAILED, name, 0, 0, "cannot measure it: " + e.getMessage(), "", "");
    }
    Instant now = clock.instant();
    RemountPolicy.Decision d = policy.decide(usage.sizeBytes(), usage.usedBytes(), requestedBytes, ramBytes,
        lastRemount.get(mount.dev()), now);
    String opts = options(before);
    if (!d.grow()) {
      LOG.info("not remounting {} ({}): {}", name, trigger, d.reason());
      return new RemountOutcome(RemountOutcome.Result.REFUSED, name, d.fromBytes(), d.fromBytes(), d.reason(), opts, opts);
    }
    lastRemount.put(mount.dev(), now);
    LOG.warn("remounting {} ({}): {}, {} bytes used; options before: {}", name, trigger, d.reason(), usage.usedBytes(), opts);
    Set<String> kept = keptFlags(before);
    String data = "size=" + d.toBytes();
    try {
      if (inContainer) {
        nsenter(mount, kept, data);
      } else {
        MountCalls.get().remount(mount.path(), kept, data);
      }
    } catch (IOException e) {
      LOG.error("remount of {} failed: {}", name, e.getMessage());
      return new RemountOutcome(RemountOutcome.Result.FAILED, name, d.fromBytes(), d.fromBytes(), e.getMessage(), opts, opts);
    }
    MountEntry after = entry(mount, inContainer);
    String optsAfter = after == null ? "(gone)" : options(after);
    long sizeAfter = sizeNow(mount, d.toBytes());
    LOG.warn("remounted {}: size {} -> {} bytes; options after: {}", name, d.fromBytes(), sizeAfter, optsAfter);
    if (after != null && !keptFlags(after).equals(kept)) {
      LOG.error("remount of {} changed its mount flags from {} to {}", name, kept, keptFlags(after));
    }
    return new RemountOutcome(RemountOutcome.Result.GROWN, name, d.fromBytes(), sizeAfter, d.reason(), opts, optsAfter);
  }

  /** A tmpfs known only as /proc/PID/root/...: only its own namespace can remount it. */
  private boolean reachedThroughProc(ShmMount mount) {
    return Path.of(mount.path()).startsWith(paths.proc());
  }

  private void nsenter(ShmMount mount, Set<String> kept, String data) throws IOException {
    IOException last = new IOException("no process of its namespace is left to enter");
    for (int pid : mount.pids()) {
      String options = String.join(",", concat(List.of("remount"), kept, List.of(data)));
      List<String> cmd = List.of("nsenter", "-t", Integer.toString(pid), "-m", "mount", "-o", options, mount.mountPoint());
      try {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          throw new IOException(String.join(" ", cmd) + " did not finish in 30 s");
        }
        if (p.exitValue() == 0) {
          return;
        }
        last = new IOException(String.join(" ", cmd) + " exited with " + p.exitValue() + ": " + out);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      }
    }
    throw last;
  }

  @SafeVarargs
  private static List<String> concat(java.util.Collection<String>... parts) {
    return Arrays.stream(parts).flatMap(java.util.Collection::stream).toList();
  }

  /** The mount's line in the mountinfo of the namespace that holds it. */
  private MountEntry entry(ShmMount mount, boolean inContainer) {
    List<Path> sources = inContainer
        ? mount.pids().stream().map(pid -> paths.proc(Integer.toString(pid), "mountinfo")).toList()
        : List.of(paths.proc("self", "mountinfo"));
    // mountinfo names mount points as the reading namespace sees them: ours is the path we reach it by.
    String point = inContainer ? mount.mountPoint() : mount.path();
    for (Path src : sources) {
      try {
        MountEntry last = null;
        for (MountEntry e : MountEntry.parseAll(Files.readString(src))) {
          if (e.mountPoint().equals(point) && e.dev().equals(mount.dev())) {
            last = e;
          }
        }
        if (last != null) {
          return last;
        }
      } catch (IOException e) {
        // that process exited: try the next of its namespace
      }
    }
    return null;
  }

  private long sizeNow(ShmMount mount, long fallback) {
    try {
      return PathWalks.shared().run(mount.path(), () -> Linux.get().statvfs(mount.path())).sizeBytes();
    } catch (IOException e) {
      return fallback;
    }
  }

  private static Set<String> keptFlags(MountEntry e) {
    Set<String> words = new LinkedHashSet<>();
    for (String w : (e.mountOptions() + "," + e.superOptions()).split(",")) {
      if (MountCalls.KEPT_FLAGS.contains(w)) {
        words.add(w);
      }
    }
    return words;
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
