package org.shmguard.host;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Runs every call that walks a path to a watched mount (stat, open, statvfs, inotify) on a thread
 * of its own, with a deadline. The path to a container's /dev/shm is {@code /proc/PID/root/dev/shm}:
 * it walks through that namespace's root, which can be a FUSE or network directory whose server
 * has stopped answering; the kernel then waits on the server inside the walk, and nothing can
 * interrupt it from outside. The caller waits at most the deadline and is told {@link Stalled};
 * the stuck thread is left behind (it ends when the server answers, the connection is aborted,
 * or the process exits), and the same path is refused at once, without another thread, until it
 * does. Walks through other namespaces' roots are capped, so that no number of stalled
 * namespaces can make the host's own mounts unreachable.
 *
 * <p>A walk that overran its deadline is stalled only when it is waiting in the kernel and makes
 * no progress ({@link WalkProgress}): a walk that runs, waits for a CPU (a host whose cores are
 * all busy, when its /dev/shm fills), or has not been scheduled yet is given another deadline, up
 * to {@link #STARVED_LIMIT} in all. A tmpfs never waits on a server; a FUSE or network
 * filesystem that stopped answering leaves the walk asleep in its system call, and that is told
 * at the first deadline as before.
 *
 * <pre>{@code
 * StatxResult st = PathWalks.shared().run("/proc/4242/root/dev/shm", () -> Linux.get().stat(path));
 * }</pre>
 */
public final class PathWalks {
  /** Long enough for a slow but live server; a tmpfs answers in microseconds. */
  public static final Duration DEADLINE = Duration.ofSeconds(2);
  /** The longest a walk that keeps making progress (a starved CPU) is waited for, before it counts as stalled: well inside a pass's 30 s. */
  static final int STARVED_DEADLINES = 5;
  public static final Duration STARVED_LIMIT = DEADLINE.multipliedBy(STARVED_DEADLINES);
  /** Stuck walks through other namespaces' roots kept at most: each holds a thread. */
  static final int MAX_STUCK_IN_NAMESPACES = 32;
  private static final Pattern THROUGH_NAMESPACE = Pattern.compile("/proc/[0-9]+/root(/|$)");
  private static final PathWalks SHARED = new PathWalks(DEADLINE, MAX_STUCK_IN_NAMESPACES);
  private static final AtomicInteger SEQ = new AtomicInteger();
  /** Threads are reused while they answer; one that is stuck stays out of the pool until it returns. */
  private static final ExecutorService THREADS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
      new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "shmguard-walk-" + SEQ.incrementAndGet());
        t.setDaemon(true);
        return t;
      });

  private final Duration deadline;
  private final int maxStuckInNamespaces;
  /** Path -> when its walk started, for the walks that overran and have not returned yet. */
  private final Map<String, Long> stuck = new ConcurrentHashMap<>();
  private final AtomicInteger stuckInNamespaces = new AtomicInteger();
  private volatile Consumer<String> onStall = p -> { };
  private volatile Consumer<String> onRecover = p -> { };

  PathWalks(Duration deadline, int maxStuckInNamespaces) {
    this.deadline = deadline;
    this.maxStuckInNamespaces = maxStuckInNamespaces;
  }

  /** The walks of this process: every mount path is walked through here, so a stuck path is known to all. */
  public static PathWalks shared() {
    return SHARED;
  }

  /** A call that walks a path and may wait on the filesystem's server. */
  @FunctionalInterface
  public interface Walk<T> {
    T run() throws IOException;
  }

  /** The walk did not finish within the deadline, or an earlier one of the same path still has not. */
  public static final class Stalled extends IOException {
    Stalled(String message) {
      super(message);
    }
  }

  /** Told the path of each walk that overran, once, and again when it finally returned. */
  public void onStallAndRecovery(Consumer<String> stalled, Consumer<String> recovered) {
    this.onStall = stalled;
    this.onRecover = recovered;
  }

  /** The paths whose walk is stuck now. */
  public Set<String> stuckPaths() {
    return Set.copyOf(stuck.keySet());
  }

  /**
   * Runs {@code walk} for {@code path}; its result, its own IOException, or {@link Stalled}. A
   * result that arrives after the caller gave up is closed if it can be (a directory handle).
   */
  public <T> T run(String path, Walk<T> walk) throws IOException {
    Long since = stuck.get(path);
    if (since != null) {
      throw new Stalled("a walk to " + path + " has waited on its filesystem for "
          + (System.nanoTime() - since) / 1_000_000_000L + " s; skipped until it answers");
    }
    boolean inNamespace = THROUGH_NAMESPACE.matcher(path).find();
    if (inNamespace && stuckInNamespaces.get() >= maxStuckInNamespaces) {
      throw new Stalled(maxStuckInNamespaces + " walks through other namespaces' roots are stuck; " + path
          + " is not tried until one of them answers");
    }
    long started = System.nanoTime();
    CompletableFuture<T> result = new CompletableFuture<>();
    WalkProgress progress = new WalkProgress(started);
    THREADS.execute(() -> {
      progress.begin();
      try {
        result.complete(walk.run());
      } catch (IOException | RuntimeException e) {
        result.completeExceptionally(e);
      }
    });
    try {
      long slice = deadline.toNanos() / 4;
      while (true) {
        try {
          return result.get(slice, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          long now = System.nanoTime();
          progress.look(now);
          long waited = now - started;
          // Past the deadline, a walk asleep in the kernel for half of it is stalled; one that runs or
          // waits for a CPU (a busy host, not a filesystem that stopped answering) is waited for, up to the limit.
          if (waited >= deadline.toNanos() && (progress.stillSince(now) >= deadline.toNanos() / 2
              || waited >= deadline.toNanos() * STARVED_DEADLINES)) {
            abandon(path, inNamespace, started, result);
            throw new Stalled(path + " did not answer within " + deadline.toMillis() + " ms: its filesystem (or one on the"
                + " way to it) is not answering; skipped until it answers");
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandon(path, inNamespace, started, result);
      throw new Stalled("interrupted while walking to " + path);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw (RuntimeException) e.getCause();
    }
  }

  private <T> void abandon(String path, boolean inNamespace, long started, CompletableFuture<T> result) {
    if (stuck.putIfAbsent(path, started) != null) {
      return;
    }
    if (inNamespace) {
      stuckInNamespaces.incrementAndGet();
    }
    onStall.accept(path);
    result.whenComplete((late, error) -> {
      if (late instanceof AutoCloseable c) {
        try {
          c.close();
        } catch (Exception ignored) {
          // nothing waits for it any more
        }
      }
      stuck.remove(path);
      if (inNamespace) {
        stuckInNamespaces.decrementAndGet();
      }
      onRecover.accept(path);
    });
  }
}
