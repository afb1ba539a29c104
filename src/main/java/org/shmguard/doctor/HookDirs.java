package org.shmguard.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.shmguard.host.HostPaths;

/**
 * The OCI hook directories a container runtime installed on the host reads by default, as its
 * configuration files resolve them: podman's {@code [engine] hooks_dir} in containers.conf (the
 * package's file under /usr/share, then /etc, then the containers.conf.d drop-ins in name order,
 * the last setting winning), CRI-O's {@code [crio.runtime] hooks_dir} in crio.conf and its
 * crio.conf.d drop-ins. Unset, both read only /usr/share/containers/oci/hooks.d (containers-common's
 * and CRI-O's built-in default; podman 4.3 on Debian 12 logs "reading hooks from
 * /usr/share/containers/oci/hooks.d" and nothing else).
 *
 * <pre>{@code
 * for (HookDirs.Runtime r : HookDirs.installed(HostPaths.system())) {
 *   r.name();   // "podman"
 *   r.dirs();   // [/usr/share/containers/oci/hooks.d]
 *   r.source(); // "its built-in default (no hooks_dir in /usr/share/containers/containers.conf)"
 * }
 * }</pre>
 */
final class HookDirs {
  /** Where podman and CRI-O read hooks when no configuration names a directory. */
  static final String BUILT_IN = "/usr/share/containers/oci/hooks.d";
  /** The directory an administrator may expect, read only when a hooks_dir setting lists it. */
  static final String ETC = "/etc/containers/oci/hooks.d";
  private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"|'([^']*)'");

  private HookDirs() {}

  /**
   * One runtime's hooks directories.
   *
   * @param name "podman" or "CRI-O"
   * @param dirs the directories it reads, in increasing precedence
   * @param source where they come from: "file:line", or its built-in default and the files read
   */
  record Runtime(String name, List<String> dirs, String source) {
    Runtime {
      dirs = List.copyOf(dirs);
    }
  }

  /** Every runtime found on the host (by its program), with the directories it reads. */
  static List<Runtime> installed(HostPaths paths) {
    List<Runtime> out = new ArrayList<>();
    if (anyExists(paths, "/usr/bin/podman", "/usr/local/bin/podman")) {
      out.add(resolve(paths, "podman", "engine",
          List.of("/usr/share/containers/containers.conf", "/etc/containers/containers.conf"),
          List.of("/usr/share/containers/containers.conf.d", "/etc/containers/containers.conf.d")));
    }
    if (anyExists(paths, "/usr/bin/crio", "/usr/local/bin/crio")) {
      out.add(resolve(paths, "CRI-O", "crio.runtime", List.of("/etc/crio/crio.conf"), List.of("/etc/crio/crio.conf.d")));
    }
    return out;
  }

  private static boolean anyExists(HostPaths paths, String... programs) {
    for (String p : programs) {
      if (Files.isRegularFile(Path.of(paths.resolve(p)))) {
        return true;
      }
    }
    return false;
  }

  private static Runtime resolve(HostPaths paths, String name, String table, List<String> mains, List<String> dropInDirs) {
    List<String> files = new ArrayList<>();
    for (String f : mains) {
      if (Files.isRegularFile(Path.of(paths.resolve(f)))) {
        files.add(f);
      }
    }
    TreeMap<String, String> dropIns = new TreeMap<>(); // a later directory's name hides an earlier's
    for (String d : dropInDirs) {
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(paths.resolve(d)), "*.conf")) {
        for (Path p : entries) {
          dropIns.put(p.getFileName().toString(), d + "/" + p.getFileName());
        }
      } catch (IOException e) {
        // no such directory
      }
    }
    files.addAll(dropIns.values());
    List<String> dirs = null;
    String source = null;
    for (String f : files) {
      Setting s = hooksDir(paths, f, table);
      if (s != null) {
        dirs = s.dirs;
        source = f + ":" + s.line;
      }
    }
    if (dirs == null) {
      return new Runtime(name, List.of(BUILT_IN), "its built-in default (no hooks_dir in "
          + (files.isEmpty() ? "any configuration file" : String.join(", ", files)) + ")");
    }
    return new Runtime(name, dirs, source);
  }

  private record Setting(List<String> dirs, int line) {}

  /** The file's hooks_dir in [table], or null: a TOML array of strings, on one line or several. */
  private static Setting hooksDir(HostPaths paths, String file, String table) {
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(paths.resolve(file)));
    } catch (IOException e) {
      return null;
    }
    String current = "";
    Setting found = null;
    for (int i = 0; i < lines.size(); i++) {
      String line = stripComment(lines.get(i)).strip();
      if (line.startsWith("[")) {
        current = line.replaceAll("^\\[+|\\]+$", "").strip();
        continue;
      }
      if (!current.equals(table) || !line.matches("hooks_dir\\s*=.*")) {
        continue;
      }
      StringBuilder value = new StringBuilder(line.substring(line.indexOf('=') + 1));
      int j = i;
      while (!value.toString().contains("]") && j + 1 < lines.size()) {
        value.append(' ').append(stripComment(lines.get(++j)));
      }
      List<String> dirs = new ArrayList<>();
      Matcher m = QUOTED.matcher(value);
      while (m.find()) {
        dirs.add(m.group(1) != null ? m.group(1) : m.group(2));
      }
      found = new Setting(dirs, i + 1);
      i = j;
    }
    return found;
  }

  private static String stripComment(String line) {
    int hash = line.indexOf('#');
    return hash < 0 ? line : line.substring(0, hash);
  }
}
