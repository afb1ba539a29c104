package org.shmguard.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import org.shmguard.host.HostPaths;

/**
 * systemd-logind's RemoveIPC= setting as logind itself would resolve it: the main logind.conf
 * (the first of /etc, /run, /usr/local/lib, /usr/lib), then every logind.conf.d/*.conf drop-in in
 * file-name order, a name in /etc hiding the same name further down; the last assignment in a
 * [Login] section wins, an empty one resets to the default.
 *
 * <pre>{@code
 * LogindConfig.Setting s = LogindConfig.removeIpc(HostPaths.system());
 * s.value();   // null when nothing sets it: the build's default applies
 * }</pre>
 */
final class LogindConfig {
  private static final List<String> DIRS = List.of("/etc/systemd", "/run/systemd", "/usr/local/lib/systemd", "/usr/lib/systemd");

  private LogindConfig() {}

  /**
   * What the files say.
   *
   * @param value true or false as set, or null when unset (or reset)
   * @param source "file:line" of the assignment that decided, or null
   * @param files every file read, in order
   * @param problems lines logind would ignore (bad booleans)
   */
  record Setting(Boolean value, String source, List<String> files, List<String> problems) {
    Setting {
      files = List.copyOf(files);
      problems = List.copyOf(problems);
    }
  }

  static Setting removeIpc(HostPaths paths) {
    List<Path> files = new ArrayList<>();
    for (String dir : DIRS) {
      Path main = Path.of(paths.resolve(dir + "/logind.conf"));
      if (Files.isRegularFile(main)) {
        files.add(main);
        break;
      }
    }
    TreeMap<String, Path> dropIns = new TreeMap<>();
    for (String dir : DIRS) {
      Path d = Path.of(paths.resolve(dir + "/logind.conf.d"));
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(d, "*.conf")) {
        for (Path p : entries) {
          dropIns.putIfAbsent(p.getFileName().toString(), p);
        }
      } catch (IOException e) {
        // no such directory: nothing to add
      }
    }
    files.addAll(dropIns.values());
    Boolean value = null;
    String source = null;
    List<String> read = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (Path f : files) {
      List<String> lines;
      try {
        lines = Files.readAllLines(f);
      } catch (IOException e) {
        problems.add("cannot read " + hostPath(paths, f) + ": " + e.getMessage());
        continue;
      }
      String shown = hostPath(paths, f);
      read.add(shown);
      String section = "";
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
          continue;
        }
        if (line.startsWith("[") && line.endsWith("]")) {
          section = line.substring(1, line.length() - 1).strip();
          continue;
        }
        int eq = line.indexOf('=');
        if (!section.equals("Login") || eq < 0 || !line.substring(0, eq).strip().equals("RemoveIPC")) {
          continue;
        }
        String raw = line.substring(eq + 1).strip();
        String where = shown + ":" + (i + 1);
        if (raw.isEmpty()) {
          value = null;
          source = where;
          continue;
        }
        Boolean parsed = parseBoolean(raw);
        if (parsed == null) {
          problems.add(where + ": RemoveIPC=" + raw + " is not a boolean; logind ignores it");
        } else {
          value = parsed;
          source = where;
        }
      }
    }
    return new Setting(value, source, read, problems);
  }

  /** The path as the host names it: /etc/systemd/logind.conf, whatever root it was read under. */
  private static String hostPath(HostPaths paths, Path f) {
    return paths.isSystemRoot() ? f.toString() : "/" + paths.root().relativize(f);
  }

  /** systemd's booleans: 1/yes/y/true/t/on and 0/no/n/false/f/off, any case; null for anything else. */
  static Boolean parseBoolean(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "1", "yes", "y", "true", "t", "on" -> Boolean.TRUE;
      case "0", "no", "n", "false", "f", "off" -> Boolean.FALSE;
      default -> null;
    };
  }

  /** True when /etc/os-release names a Red Hat family system, whose systemd builds default RemoveIPC to no. */
  static boolean redHatFamily(HostPaths paths) {
    try {
      for (String line : Files.readAllLines(Path.of(paths.resolve("/etc/os-release")))) {
        if ((line.startsWith("ID=") || line.startsWith("ID_LIKE=")) && line.toLowerCase(Locale.ROOT).matches(".*\\brhel\\b.*")) {
          return true;
        }
      }
    } catch (IOException e) {
      return false;
    }
    return false;
  }
}
