package org.shmguard.host;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.function.Consumer;

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

  /**
   * Hands each line of a /proc file to {@code line}, read a buffer at a time and never held whole:
   * a user namespace's mountinfo can have tens of thousands of lines of 8 KiB, more than the
   * daemon's heap. Bytes that are not UTF-8 (a user's mount point) are replaced, as by
   * {@link #readOrNull}. False if the process has gone.
   */
  static boolean forEachLine(Path path, Consumer<String> line) throws AccessDeniedException {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(Files.newInputStream(path), StandardCharsets.UTF_8))) {
      for (String l; (l = r.readLine()) != null; ) {
        line.accept(l);
      }
      return true;
    } catch (NoSuchFileException e) {
      return false;
    } catch (AccessDeniedException e) {
      throw e;
    } catch (IOException e) {
      if (isGone(e)) {
        return false;
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
