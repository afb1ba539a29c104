package org.shmguard.testing;

import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A FUSE filesystem served by src/test/resources/fuse/fusefix.c for one test: an ordinary user's
 * mount that denies root, or root's mount with allow_other that stands in for NFS or Lustre, and
 * that can stop answering ({@link #stall()}) and answer again ({@link #resume()}). close() aborts
 * the connection (which ends every request still waiting on it), unmounts, and ends the server
 * and every process started through it, leaving no mount or process behind. Two mounts live as
 * long as the test sandbox and go with it: fusectl on /sys/fs/fuse/connections, and, where the
 * machine's /dev/fuse is closed to ordinary users, a 0666 node bound over it.
 *
 * <pre>{@code
 * try (FuseFixture fs = FuseFixture.ofUser(65534)) { Process p = fs.holdFile(); fs.stall(); ... }
 * }</pre>
 */
public final class FuseFixture implements AutoCloseable {
  public static final String[] NOBODY = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  private static final AtomicInteger SEQ = new AtomicInteger();
  private static final Path CONNECTIONS = Path.of("/sys/fs/fuse/connections");
  private final Path mountpoint;
  private final Process server;
  private final List<Process> started = new ArrayList<>();
  private final int connection;
  private boolean closed;

  private FuseFixture(Path mountpoint, Process server, int connection) {
    this.mountpoint = mountpoint;
    this.server = server;
    this.connection = connection;
  }

  /**
   * Mounted by uid 65534 through the setuid fusermount3, without allow_other: the kernel refuses
   * every other user, root included (EACCES on stat).
   */
  public static FuseFixture ofNobody() {
    Sandbox.require();
    assumeThat(Path.of("/usr/bin/fusermount3")).as("needs fusermount3 (package fuse3)").exists();
    openDevFuseToUsers();
    Path mnt = mountpoint("user");
    Cmd.run("chown", "65534:65534", mnt.toString());
    List<String> cmd = new ArrayList<>(List.of(NOBODY));
    cmd.addAll(List.of(binary().toString(), "serve", mnt.toString()));
    return serve(mnt, cmd);
  }

  /**
   * As {@link #ofNobody}, at {@code mnt}, a directory the caller made and gave uid 65534 (fusermount3
   * lets a user mount only on a directory they may write).
   */
  public static FuseFixture ofNobodyAt(Path mnt) {
    Sandbox.require();
    assumeThat(Path.of("/usr/bin/fusermount3")).as("needs fusermount3 (package fuse3)").exists();
    openDevFuseToUsers();
    List<String> cmd = new ArrayList<>(List.of(NOBODY));
    cmd.addAll(List.of(binary().toString(), "serve", mnt.toString()));
    return serve(mnt, cmd);
  }

  /** Mounted by root with allow_other, as an administrator mounts NFS: every user, root included, walks it. */
  public static FuseFixture ofRoot() {
    Sandbox.require();
    Path mnt = mountpoint("root");
    return serve(mnt, List.of(binary().toString(), "serve", mnt.toString(), "allow_other"));
  }

  private static Path binary() {
    assumeThat(Path.of("/dev/fuse")).as("needs /dev/fuse").exists();
    return CProgram.build("fuse/fusefix.c", CProgram.pkgConfig("fuse3"));
  }

  private static Path mountpoint(String who) {
    try {
      return Files.createDirectories(Sandbox.MOUNTS.resolve("fuse-" + who + "-" + ProcessHandle.current().pid() + "-"
          + SEQ.incrementAndGet()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static FuseFixture serve(Path mnt, List<String> cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String said = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
      if (!"ready".equals(said)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        throw new AssertionError("fusefix did not mount " + mnt + ": " + said);
      }
      return new FuseFixture(mnt, p, connectionOf(mnt));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted");
    }
  }

  /**
   * This machine's /dev/fuse may be 0600 (FUSE closed to ordinary users): inside the sandbox's
   * private mount namespace only, a 0666 node for the same device is bound over it, as a stock
   * distribution ships it. Nothing outside the sandbox changes.
   */
  public static synchronized void openDevFuseToUsers() {
    try {
      if (Files.getPosixFilePermissions(Path.of("/dev/fuse")).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
        return;
      }
      Path node = Files.createDirectories(Sandbox.MOUNTS.resolve("dev")).resolve("fuse");
      if (!Files.exists(node)) {
        Cmd.run("mknod", "-m", "666", node.toString(), "c", "10", "229");
      }
      Cmd.run("mount", "--bind", node.toString(), "/dev/fuse");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The FUSE connection's number: the minor of the mount's device, its directory under /sys/fs/fuse/connections. */
  private static int connectionOf(Path mnt) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] f = line.split(" ");
      if (f[4].equals(mnt.toString())) {
        return Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1));
      }
    }
    throw new AssertionError(mnt + " is not in mountinfo");
  }

  public Path path() {
    return mountpoint;
  }

  /** The one file the filesystem serves. */
  public Path file() {
    return mountpoint.resolve("held");
  }

  /** A process of uid {@code nobody ? 65534 : 0} that holds {@link #file()} open until close(). */
  public Process holdFile(boolean nobody) {
    List<String> cmd = new ArrayList<>(nobody ? List.of(NOBODY) : List.of());
    cmd.addAll(List.of("sh", "-c", "exec 3<\"$0\" && echo ready && exec sleep 3600", file().toString()));
    return startReady(cmd);
  }

  /**
   * A "container" whose root directory is this filesystem: a mount namespace of its own with a
   * 1 MB tmpfs at its /dev/shm, chrooted here, so /proc/PID/root/dev/shm walks through this
   * filesystem. Needs a root-mounted (allow_other) fixture.
   */
  public Process containerRootedHere() {
    return startReady(List.of(binary().toString(), "container", mountpoint.toString()));
  }

  private Process startReady(List<String> cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      started.add(p);
      String said = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
      if (!"ready".equals(said)) {
        throw new AssertionError(String.join(" ", cmd) + " did not start: " + said);
      }
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The server stops reading requests: every walk, stat or open on the filesystem then waits in
   * the kernel (killably, as on a hard NFS mount whose server went away) until {@link #resume()}.
   */
  public void stall() {
    Cmd.run("kill", "-STOP", Long.toString(server.pid()));
  }

  public void resume() {
    Cmd.exec("kill", "-CONT", Long.toString(server.pid())); // it may have exited already (an abort ends it)
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    abortConnection();
    resume();
    for (Process p : started) {
      p.destroyForcibly();
    }
    Cmd.exec("umount", "-l", mountpoint.toString());
    try {
      for (Process p : started) {
        p.waitFor(30, TimeUnit.SECONDS);
      }
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(mountpoint);
    } catch (IOException | InterruptedException e) {
      throw new AssertionError("cannot clean up " + mountpoint + ": " + e);
    }
  }

  /** Ends every request waiting on the connection (fusectl, mounted in the sandbox if need be). */
  private void abortConnection() {
    Path abort = CONNECTIONS.resolve(Integer.toString(connection)).resolve("abort");
    if (!Files.exists(abort)) {
      Cmd.exec("mount", "-t", "fusectl", "fusectl", CONNECTIONS.toString());
    }
    try {
      Files.writeString(abort, "1");
    } catch (IOException e) {
      // the connection is already gone
    }
  }

  /** Generous waits for a loaded machine. */
  public static final Duration PATIENCE = Duration.ofSeconds(60);
}
