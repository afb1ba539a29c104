package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.shmguard.nativ.RootDirectory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file the daemon keeps current (the node_exporter textfile, advice.env), written on a thread
 * of its own so that a slow or stalled filesystem never holds the worker that reaps. Only the
 * newest content matters: one write runs, at most one waits, and a newer one replaces the one
 * waiting (a bounded queue that drops the oldest). Each write goes through a freshly checked
 * {@link RootDirectory}; a failure is logged when it first happens or changes, and once more
 * when writing works again.
 *
 * <pre>{@code
 * KeptFile f = KeptFile.start(Path.of("/run/shmguard/advice.env"), 0644, false, "the advice file");
 * f.replace(() -> text.getBytes(UTF_8));   // returns at once
 * }</pre>
 */
public final class KeptFile implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KeptFile.class);
  private final Path file;
  private final int mode;
  private final boolean createDirectories;
  private final String what;
  private final ThreadPoolExecutor writer;
  private String lastFailure;
  /** What the last successful write wrote: the same content again is not rewritten. */
  private byte[] written;

  private KeptFile(Path file, int mode, boolean createDirectories, String what) {
    this.file = file.toAbsolutePath();
    this.mode = mode;
    this.createDirectories = createDirectories;
    this.what = what;
    if (this.file.getParent() == null) {
      throw new IllegalArgumentException(what + ": " + file + " names no file");
    }
    this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(1), r -> {
      Thread t = new Thread(r, "shmguard-write-" + this.file.getFileName());
      t.setDaemon(true); // a write stuck in the kernel must not keep the JVM from exiting
      return t;
    }, new ThreadPoolExecutor.DiscardOldestPolicy());
  }

  /**
   * Keeps {@code file} with {@code mode}; with {@code createDirectories} its missing directories
   * are made (root's, 0755). {@code what} names it in log lines.
   */
  public static KeptFile start(Path file, int mode, boolean createDirectories, String what) {
    return new KeptFile(Objects.requireNonNull(file, "file"), mode, createDirectories, what);
  }

  public Path path() {
    return file;
  }

  /**
   * Queues a replacement of the whole file; {@code content} is computed on the writing thread.
   * Content equal to what was last written successfully is not written again; after a failure
   * it is.
   */
  public void replace(Supplier<byte[]> content) {
    if (!writer.isShutdown()) {
      writer.execute(() -> write(content));
    }
  }

  private void write(Supplier<byte[]> content) {
    try {
      byte[] bytes = content.get();
      if (Arrays.equals(bytes, written)) {
        return;
      }
      try (RootDirectory dir = RootDirectory.open(file.getParent(), createDirectories)) {
        dir.replaceFile(file.getFileName().toString(), bytes, mode);
      }
      written = bytes;
      if (lastFailure != null) {
        LOG.info("{} {} is written again", what, file);
        lastFailure = null;
      }
    } catch (IOException | RuntimeException e) {
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      if (!why.equals(lastFailure)) {
        LOG.warn("cannot write {} {}: {}", what, file, why);
        lastFailure = why;
      }
    }
  }

  /**
   * Stops taking writes and waits up to {@code d} for the one running and the one waiting (the
   * newest content) to be written; true if they were. For a file whose last content matters at a
   * stop (the holder history).
   */
  public boolean closeWithin(java.time.Duration d) {
    writer.shutdown();
    try {
      return writer.awaitTermination(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Stops taking writes; one already running is left to finish on its own thread. */
  @Override
  public void close() {
    writer.shutdown();
  }
}
