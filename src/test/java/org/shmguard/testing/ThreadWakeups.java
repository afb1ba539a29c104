package org.shmguard.testing;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How often a thread of this JVM, found by its name as the kernel shows it (comm, at most 15
 * characters), has gone to sleep and woken: its voluntary context switches in
 * /proc/self/task/TID/status. An idle thread that blocks has none; one that polls on a timer has
 * one per tick.
 */
public final class ThreadWakeups {
  private ThreadWakeups() {}

  /** The voluntary context switches of the one thread named {@code comm}; fails if there is not exactly one. */
  public static long of(String comm) throws IOException {
    long found = -1;
    int count = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path t : tasks) {
        String name;
        try {
          name = Files.readString(t.resolve("comm")).trim();
        } catch (IOException e) {
          continue; // ended meanwhile
        }
        if (name.equals(comm)) {
          count++;
          for (String line : Files.readAllLines(t.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              found = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
          }
        }
      }
    }
    if (count != 1) {
      throw new AssertionError(count + " threads named " + comm + ", expected one");
    }
    return found;
  }
}
