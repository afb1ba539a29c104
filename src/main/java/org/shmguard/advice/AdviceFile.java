package org.shmguard.advice;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Keeps the advice file (/run/shmguard/advice.env) current: KEY=VALUE lines for the host's own
 * /dev/shm, replaced by rename so a reader sees the old file or the new one, never half of one.
 */
public final class AdviceFile {
  private final Path file;

  public AdviceFile(Path file) {
    this.file = file;
  }

  public Path path() {
    return file;
  }

  public void write(String envText) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    try {
      Files.writeString(tmp, "# shmguard advice for this host's /dev/shm; see 'shmguard advise --help'\n" + envText,
          StandardCharsets.UTF_8);
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
