package org.shmguard.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.shmguard.host.MountEntry;

/**
 * An ordinary user's process: uid 65534 in a user namespace of its own (unshare -Ur) with a
 * private mount namespace, its /dev/shm what the script makes it. Ended by pid; its mounts go
 * with its namespace.
 *
 * <pre>{@code
 * try (UserNsAttacker a = UserNsAttacker.chroot("size=1m")) { ... a.pid() ... a.shm() ... }
 * }</pre>
 */
public final class UserNsAttacker implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final Path shmFromHere;

  private UserNsAttacker(Process process, Path dir, Path shmFromHere) {
    this.process = process;
    this.dir = dir;
    this.shmFromHere = shmFromHere;
  }

  /**
   * A chroot on a tmpfs of its own, whose /dev/shm is a tmpfs of {@code options} (with size=1m,
   * 88% full: past a critical threshold of 80), then made read-only.
   */
  public static UserNsAttacker chroot(String options) throws IOException {
    Path dir = Files.createDirectories(Sandbox.MOUNTS.resolve("attacker-" + System.nanoTime()));
    String script = """
        set -e
        R="$1"
        mount -t tmpfs -o size=16m atk-root "$R"
        mkdir -p "$R/usr" "$R/dev/shm"
        ln -s usr/bin "$R/bin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"
        mount --rbind /usr "$R/usr"
        mount -t tmpfs -o "$2" atk-shm "$R/dev/shm"
        head -c 921600 /dev/zero > "$R/dev/shm/filler"
        head -c 4100 /dev/zero > "$R/dev/shm/nccl-Atk001"
        mount --options-mode ignore -o "remount,ro,$2" "$R/dev/shm"
        exec chroot "$R" /bin/sh -c 'echo ready; exec sleep 600'
        """;
    return start(dir, script, dir.toString(), options);
  }

  /**
   * A 1 MiB tmpfs of its own at its /dev/shm (no chroot: what `unshare -Urm` and one mount
   * give any user), holding an unheld {@code nccl-Own001} of 4100 bytes and a filler that takes
   * the rest: 100% full.
   */
  public static UserNsAttacker ownFullShm() throws IOException {
    String script = """
        set -e
        mount -t tmpfs -o size=1m,mode=1777 own-shm /dev/shm
        head -c 4100 /dev/zero > /dev/shm/nccl-Own001
        head -c 2097152 /dev/zero > /dev/shm/filler 2>/dev/null || true
        echo ready
        exec sleep 600
        """;
    return start(null, script);
  }

  /**
   * A tmpfs of its own mounted over {@code dir} (any directory it can reach: its mount namespace is
   * its own), holding an unheld {@code nccl-Atk001} of 4100 bytes: what `unshare -Urm` lets any
   * user make at a path shaped like a pod's volume.
   */
  public static UserNsAttacker mountsTmpfsAt(Path dir) throws IOException {
    String script = """
        set -e
        mount -t tmpfs -o size=1m atk-volume "$1"
        head -c 4100 /dev/zero > "$1/nccl-Atk001"
        echo ready
        exec sleep 600
        """;
    return start(null, script, dir.toString());
  }

  /** Binds {@code dir} (a directory of someone else's tmpfs it can write) at its /dev/shm, and plants a file there. */
  public static UserNsAttacker bindAtDevShm(Path dir) throws IOException {
    String script = """
        set -e
        mount --bind "$1" /dev/shm
        head -c 4100 /dev/zero > /dev/shm/nccl-Atk001
        echo ready
        exec sleep 600
        """;
    return start(null, script, dir.toString());
  }

  /**
   * As {@code uid}: a tmpfs of its own at its /dev/shm, filled by {@code mkfiles} (the test
   * resource memory/mkfiles.c) with {@code files} empty files named {@code nccl-} and 230 more
   * characters, and {@code links} hard links of one more such file: the most names a mount can
   * cost shmguard in memory.
   */
  public static UserNsAttacker crowded(int uid, Path mkfiles, int files, int links) throws IOException {
    String script = """
        set -e
        mount -t tmpfs -o size=64m,nr_inodes=$(($2 + $3 + 100)) crowd-shm /dev/shm
        long=nccl-$(printf '%0223d' 0)
        "$1" /dev/shm "$long" "$2"
        : > /dev/shm/nccl-linked
        "$1" /dev/shm "${long}L" "$3" 0 nccl-linked
        echo ready
        exec sleep 600
        """;
    return start(uid, null, script, mkfiles.toString(), Integer.toString(files), Integer.toString(links));
  }

  private static UserNsAttacker start(Path dir, String script, String... args) throws IOException {
    return start(65534, dir, script, args);
  }

  private static UserNsAttacker start(int uid, Path dir, String script, String... args) throws IOException {
    Sandbox.require();
    List<String> cmd = new ArrayList<>(List.of("setpriv", "--reuid", Integer.toString(uid), "--regid",
        Integer.toString(uid), "--clear-groups",
        "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"));
    cmd.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String line = new String(p.getInputStream().readNBytes(6), StandardCharsets.UTF_8); // blocks until ready or exit
    if (!line.equals("ready\n")) {
      String rest = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.destroyForcibly();
      throw new AssertionError("the attacker did not start: " + line + rest);
    }
    // setpriv, unshare, sh and chroot each exec the next: the sleeping process is the one started.
    Path shm = Path.of("/proc", Long.toString(p.pid()), "root", "dev", "shm");
    return new UserNsAttacker(p, dir, shm);
  }

  public int pid() {
    return (int) process.pid();
  }

  public Path file(String name) {
    return shmFromHere.resolve(name);
  }

  /** Its /dev/shm as its own mountinfo shows it. */
  public MountEntry shm() throws IOException {
    MountEntry last = null;
    for (MountEntry e : MountEntry.parseAll(Files.readString(Path.of("/proc", Integer.toString(pid()), "mountinfo")))) {
      if (e.mountPoint().equals("/dev/shm")) {
        last = e;
      }
    }
    if (last == null) {
      throw new AssertionError("no /dev/shm in the attacker's mountinfo");
    }
    return last;
  }

  @Override
  public void close() throws IOException {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (dir != null) {
      Files.deleteIfExists(dir);
    }
  }
}
