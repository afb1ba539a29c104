package org.shmguard.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.shmguard.host.HostPaths;

/**
 * systemd-tmpfiles rules that age-clean /dev/shm: "systemd-tmpfiles --clean" removes files by
 * age, held or not, so a rank that attaches late finds its segment gone ("Error while attaching
 * to shared memory segment"). Reads tmpfiles.d/*.conf from /etc, /run, /usr/local/lib and /usr/lib,
 * a name in /etc hiding the same name further down, as systemd-tmpfiles does.
 */
final class TmpfilesSweepCheck implements Check {
  private static final List<String> DIRS = List.of("/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/local/lib/tmpfiles.d", "/usr/lib/tmpfiles.d");

  @Override
  public String name() {
    return "tmpfiles";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    List<String> rules = sweeps(ctx.paths());
    if (rules.isEmpty()) {
      return List.of();
    }
    return List.of(Finding.of("tmpfiles-shm-sweep", Severity.WARNING, "/dev/shm",
        "systemd-tmpfiles age-cleans /dev/shm: it removes segments by age whether or not a job holds them, and a rank"
            + " that attaches late then fails with \"Error while attaching to shared memory segment ... No such file or directory\"",
        rules,
        List.of("remove the age from these rules, or exclude NCCL's files with a line \"x /dev/shm/nccl-*\" in"
                + " /etc/tmpfiles.d/shmguard.conf",
            "shmguard reaps leaked segments instead, and only those no process holds")));
  }

  /** "file:line: rule" for every rule with an age on /dev/shm or below it. */
  static List<String> sweeps(HostPaths paths) {
    TreeMap<String, Path> files = new TreeMap<>();
    for (String dir : DIRS) {
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(paths.resolve(dir)), "*.conf")) {
        for (Path p : entries) {
          files.putIfAbsent(p.getFileName().toString(), p);
        }
      } catch (IOException e) {
        // no such directory
      }
    }
    List<String> out = new ArrayList<>();
    for (Path f : files.values()) {
      List<String> lines;
      try {
        lines = Files.readAllLines(f);
      } catch (IOException e) {
        continue;
      }
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (line.isEmpty() || line.startsWith("#")) {
          continue;
        }
        String[] col = line.split("\\s+");
        // Type Path Mode User Group Age Argument; "-" or a missing column means no age.
        if (col.length < 6 || col[5].equals("-") || col[0].startsWith("x") || col[0].startsWith("X")) {
          continue;
        }
        String path = col[1];
        if (path.equals("/dev/shm") || path.equals("/dev/shm/") || path.startsWith("/dev/shm/")) {
          String shown = paths.isSystemRoot() ? f.toString() : "/" + paths.root().relativize(f);
          out.add(shown + ":" + (i + 1) + ": " + line);
        }
      }
    }
    return out;
  }
}
