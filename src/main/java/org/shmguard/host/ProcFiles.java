package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Reading /proc files, where "the process has gone" is normal and "permission denied" is not. */
final class ProcFiles {
  private ProcFiles() {}

  /** The file's text, or null if the process has gone. */
  static String readOrNull(Path path) throws AccessDeniedException {
    try {
      return new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return null;
    } catch (AccessDeniedException e) {
      throw e;
    } catch (IOException e) {
      if (isGone(e)) {
        return null;
      }
      throw new AccessDeniedException(path.toString(), null, e.getMessage());
    }
  }

  /** A link's target, or null if it has gone or cannot be read. */
  static String readLinkOrNull(Path path) {
    try {
      return Files.readSymbolicLink(path).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }

  /** ESRCH and ENOENT both mean the process exited while we looked. */
  static boolean isGone(IOException e) {
    if (e instanceof NoSuchFileException) {
      return true;
    }
    String m = e.getMessage();
    return m != null && (m.contains("No such process") || m.contains("No such file"));
  }
}
