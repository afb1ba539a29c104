package org.shmguard.advice;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.shmguard.host.KeptFile;

/**
 * Keeps the advice file (/run/shmguard/advice.env) current: KEY=VALUE lines for the host's own
 * /dev/shm, 0644, replaced by rename so a reader sees the old file or the new one, never half of
 * one, and only when it changed (or the last write failed). Written off the caller's thread
 * through {@link KeptFile}, in a directory only root can change (made if missing).
 */
public final class AdviceFile implements AutoCloseable {
  static final int MODE = 0644;
  private final KeptFile file;

  public AdviceFile(Path file) {
    this.file = KeptFile.start(file, MODE, true, "the advice file");
  }

  public Path path() {
    return file.path();
  }

  /** Queues a rewrite with {@code envText}; returns at once. */
  public void write(String envText) {
    byte[] bytes = ("# shmguard advice for this host's /dev/shm; see 'shmguard advise --help'\n" + envText)
        .getBytes(StandardCharsets.UTF_8);
    file.replace(() -> bytes);
  }

  @Override
  public void close() {
    file.close();
  }
}
