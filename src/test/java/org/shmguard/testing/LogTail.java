package org.shmguard.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a log a test started something with, for a failure message. */
public final class LogTail {
  private LogTail() {}

  /** The last {@code count} lines of {@code file}, joined; what went wrong reading it when it cannot be read. */
  public static String of(Path file, int count) {
    try {
      return last(Files.readAllLines(file), count);
    } catch (IOException e) {
      return "no log " + file + " (" + e + ")";
    }
  }

  /** The last {@code count} of {@code lines}, joined with newlines. */
  public static String last(List<String> lines, int count) {
    return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
  }
}
