package org.shmguard.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.nativ.SmallFiles;

/**
 * The drop-in directory beside a configuration file ({@code shmguard.yaml.d/} beside
 * {@code shmguard.yaml}): the files in it whose names end in {@code .yaml} and do not start with a
 * dot, in byte order of their names (as {@code LC_ALL=C ls} lists them). Each is read and checked
 * like the main file ({@link ConfigFile}); what else is in the directory (a {@code .dpkg-dist}, an
 * editor's backup, a README) is not read. Run as root, the directory must be root's and writable
 * by nobody else, as the files are: whoever can rename in it decides what root does.
 *
 * <pre>{@code
 * List<Path> files = DropIns.list(Path.of("/etc/shmguard/shmguard.yaml.d"));   // empty when absent
 * }</pre>
 */
final class DropIns {
  static final String SUFFIX = ".yaml";
  /** More than an operator's layering needs; a bound on the files read at start and at each reload. */
  static final int MAX_FILES = 64;

  private DropIns() {}

  /** The directory that holds {@code main}'s drop-ins: its path with ".d" added. */
  static Path directoryOf(Path main) {
    return main.resolveSibling(main.getFileName() + ".d");
  }

  /** The drop-ins to read, in order; none when the directory does not exist. */
  static List<Path> list(Path dir) throws ConfigException {
    String source = dir.toString();
    List<String> names = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      if (SmallFiles.effectiveUid() == 0) {
        requireOnlyRootCanChange(dir);
      }
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (name.endsWith(SUFFIX) && !name.startsWith(".")) {
          names.add(name);
          if (names.size() > MAX_FILES) {
            throw new ConfigException(source, 0, null, "holds more than " + MAX_FILES + " *" + SUFFIX
                + " files; allowed: at most " + MAX_FILES + " drop-ins");
          }
        }
      }
    } catch (NoSuchFileException e) {
      return List.of();
    } catch (NotDirectoryException e) {
      throw new ConfigException(source, 0, null, "is not a directory; allowed: a directory of *" + SUFFIX + " files, or nothing");
    } catch (AccessDeniedException e) {
      throw new ConfigException(source, 0, null, "cannot read the directory: permission denied");
    } catch (IOException e) {
      throw new ConfigException(source, 0, null, "cannot read the directory: " + e.getMessage());
    }
    names.sort(DropIns::byBytes);
    return names.stream().map(dir::resolve).toList();
  }

  private static void requireOnlyRootCanChange(Path dir) throws IOException, ConfigException {
    String allowed = "; allowed: a directory owned by root that only root can write (chown root; chmod go-w)";
    int uid = (Integer) Files.getAttribute(dir, "unix:uid");
    int mode = (Integer) Files.getAttribute(dir, "unix:mode") & 07777;
    if (uid != 0) {
      throw new ConfigException(dir.toString(), 0, null, "the directory is owned by uid " + uid
          + ", who could change what shmguard, running as root, does" + allowed);
    }
    if ((mode & 022) != 0) {
      throw new ConfigException(dir.toString(), 0, null, "the directory is writable by " + ((mode & 002) != 0 ? "every user" : "its group")
          + " (mode " + String.format("%04o", mode) + "), who could change what shmguard, running as root, does" + allowed);
    }
  }

  private static int byBytes(String a, String b) {
    return java.util.Arrays.compareUnsigned(a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
