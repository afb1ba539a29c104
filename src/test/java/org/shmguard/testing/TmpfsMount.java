package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.shmguard.model.Dev;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * A real tmpfs mounted for one test under the sandbox's private /run, unmounted by close().
 *
 * <pre>{@code
 * try (TmpfsMount shm = TmpfsMount.create("size=1m")) { Files.write(shm.path().resolve("nccl-x"), ...); }
 * }</pre>
 */
public final class TmpfsMount implements AutoCloseable {
  private static final AtomicInteger SEQ = new AtomicInteger();
  private final Path path;
  private final boolean ownsDirectory;
  private boolean closed;

  private TmpfsMount(Path path, boolean ownsDirectory) {
    this.path = path;
    this.ownsDirectory = ownsDirectory;
  }

  /** Mounts a new tmpfs with {@code options} (e.g. "size=1m,mode=1777") at a fresh directory. */
  public static TmpfsMount create(String options) {
    Sandbox.require();
    Path dir = Sandbox.MOUNTS.resolve("m" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet());
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Cmd.run("mount", "-t", "tmpfs", "-o", options, "shmguard-test", dir.toString());
    return new TmpfsMount(dir, true);
  }

  /** Mounts a new tmpfs over {@code dir}, covering what is mounted there until close(). */
  public static TmpfsMount createAt(Path dir, String options) {
    Sandbox.require();
    Cmd.run("mount", "-t", "tmpfs", "-o", options, "shmguard-test-cover", dir.toString());
    return new TmpfsMount(dir, false);
  }

  public Path path() {
    return path;
  }

  public Path file(String name) {
    return path.resolve(name);
  }

  /** The device of this tmpfs, as stat reports it. */
  public Dev dev() {
    try {
      StatxResult st = Linux.get().stat(path.toString());
      return Dev.of(st.devMajor(), st.devMinor());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes a file of {@code size} bytes (allocated, as fallocate would) and returns its path. */
  public Path createSegment(String name, int size) {
    Path p = path.resolve(name);
    try {
      Files.write(p, new byte[size]);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      Cmd.exec("umount", "-l", path.toString());
      if (!ownsDirectory) {
        return;
      }
      try {
        Files.deleteIfExists(path);
      } catch (IOException ignored) {
        // the sandbox's /run goes away with it in any case
      }
    }
  }
}
