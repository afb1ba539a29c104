package org.shmguard.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.host.HostPaths;

/**
 * Whether the shmguard OCI hook is in a directory the installed runtime reads. The packages install
 * it off, and a hook linked into a directory the runtime does not read (podman 4.3 on Debian 12
 * reads only /usr/share/containers/oci/hooks.d, not /etc/containers/oci/hooks.d) does nothing,
 * silently: GPU containers keep the /dev/shm they asked for. Says which runtime reads which
 * directory and why, and where the hook is.
 */
final class OciHookCheck implements Check {
  static final String SHIPPED = "/usr/share/shmguard/oci/shmguard-shm.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public String name() {
    return "oci-hook";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    HostPaths paths = ctx.paths();
    List<Finding> out = new ArrayList<>();
    for (HookDirs.Runtime r : HookDirs.installed(paths)) {
      String reads = r.name() + " reads hooks from " + String.join(", ", r.dirs()) + ": " + r.source();
      String link = "ln -s " + SHIPPED + " " + r.dirs().get(r.dirs().size() - 1) + "/";
      List<String> on = hooksIn(paths, r.dirs());
      if (!on.isEmpty()) {
        out.add(Finding.of("oci-hook-on", Severity.INFO, r.name(), "the shmguard OCI hook is on for " + r.name() + ": "
            + String.join(", ", on) + "; a GPU container's /dev/shm is sized at its start when remount.enabled is true",
            List.of(reads), List.of()));
        continue;
      }
      Set<String> elsewhere = new LinkedHashSet<>(List.of(HookDirs.ETC, HookDirs.BUILT_IN));
      elsewhere.removeAll(r.dirs());
      List<String> unread = hooksIn(paths, List.copyOf(elsewhere));
      if (!unread.isEmpty()) {
        out.add(Finding.of("oci-hook-unread", Severity.WARNING, r.name(), "the shmguard OCI hook is not run by "
            + r.name() + ": " + String.join(", ", unread) + " is in a directory " + r.name()
            + " does not read, so no container's /dev/shm is sized at its start",
            List.of(reads), List.of(link, "or add that directory to hooks_dir (it replaces the default: list both)")));
      } else {
        out.add(Finding.of("oci-hook-off", Severity.INFO, r.name(), "the shmguard OCI hook is off for " + r.name()
            + ": no shmguard hook in a directory it reads, so GPU containers start with the /dev/shm they ask for",
            List.of(reads), List.of(link + "   (to size a GPU container's /dev/shm at its start; remount.enabled: true)")));
      }
    }
    return out;
  }

  /**
   * The hook files in {@code dirs} that are shmguard's (named shmguard*.json, or running a program
   * of shmguard's), as "dir/name" (and its link target).
   */
  static List<String> hooksIn(HostPaths paths, List<String> dirs) {
    List<String> found = new ArrayList<>();
    for (String dir : dirs) {
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(paths.resolve(dir)), "*.json")) {
        for (Path p : entries) {
          JsonNode hook = read(paths, p);
          if (hook != null && (p.getFileName().toString().startsWith("shmguard") || hook.path("hook").path("path").asText().contains("shmguard"))) {
            String shown = dir + "/" + p.getFileName();
            found.add(Files.isSymbolicLink(p) ? shown + " -> " + target(p) : shown);
          }
        }
      } catch (IOException e) {
        // no such directory
      }
    }
    return found;
  }

  private static String target(Path link) {
    try {
      return Files.readSymbolicLink(link).toString();
    } catch (IOException e) {
      return "?";
    }
  }

  /** The JSON of a hook file, following links as the host would (absolute targets within the host root); null if unreadable. */
  private static JsonNode read(HostPaths paths, Path p) {
    Path file = p;
    try {
      for (int i = 0; i < 8 && Files.isSymbolicLink(file); i++) {
        Path t = Files.readSymbolicLink(file);
        file = t.isAbsolute() ? Path.of(paths.resolve(t.toString())) : file.resolveSibling(t);
      }
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      return null;
    }
  }
}
