package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The machine's /usr/share/containers and /etc/containers as podman and CRI-O read them by default,
 * for a test to put OCI hooks where a runtime finds them without {@code --hooks-dir}: a private copy
 * of each is bound over it in the sandbox's own mount namespace (src/test/sandbox/bin/java), so the
 * machine's directories are never written; {@link #close} unmounts both and removes the copies.
 *
 * <pre>{@code
 * try (ContainersDirs dirs = ContainersDirs.bind()) {
 *   Files.writeString(dirs.hooksDir().resolve("x.json"), hookJson); // /usr/share/containers/oci/hooks.d
 *   ...
 * }
 * }</pre>
 */
public final class ContainersDirs implements AutoCloseable {
  /** The directory podman and CRI-O read hooks from when no hooks_dir is configured. */
  public static final Path DEFAULT_HOOKS = Path.of("/usr/share/containers/oci/hooks.d");
  /** The directory read only when a hooks_dir setting names it. */
  public static final Path ETC_HOOKS = Path.of("/etc/containers/oci/hooks.d");
  private static final List<Path> BOUND = List.of(Path.of("/usr/share/containers"), Path.of("/etc/containers"));

  private final Path copies;

  private ContainersDirs(Path copies) {
    this.copies = copies;
  }

  /** Binds private copies over both directories (an empty one where the machine has none). */
  public static ContainersDirs bind() {
    Sandbox.require();
    try {
      Path copies = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "containers-dirs-");
      ContainersDirs dirs = new ContainersDirs(copies);
      try {
        dirs.bindCopies();
      } catch (RuntimeException | IOException e) {
        dirs.close();
        throw e;
      }
      return dirs;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void bindCopies() throws IOException {
    for (Path real : BOUND) {
      Path copy = copies.resolve(real.getFileName() + "-" + real.getParent().getFileName());
      Files.createDirectories(copy);
      if (Files.isDirectory(real)) {
        Cmd.run("cp", "-a", real + "/.", copy.toString());
      } else {
        throw new IllegalStateException(real + " does not exist: install podman (containers-common)");
      }
      Cmd.run("mount", "--bind", copy.toString(), real.toString());
    }
  }

  /** /usr/share/containers/oci/hooks.d, created in the private copy. */
  public Path hooksDir() {
    return mkdirs(DEFAULT_HOOKS);
  }

  /** /etc/containers/oci/hooks.d, created in the private copy. */
  public Path etcHooksDir() {
    return mkdirs(ETC_HOOKS);
  }

  private static Path mkdirs(Path p) {
    try {
      return Files.createDirectories(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    for (Path real : BOUND) {
      Cmd.exec("umount", real.toString());
    }
    try (Stream<Path> all = Files.walk(copies)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
