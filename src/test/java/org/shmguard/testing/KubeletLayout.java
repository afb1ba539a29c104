package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The host side of kubelet's layout for one test, in the sandbox's own mounts (no kubelet runs
 * here): a kubelet root whose {@code pods/<uid>/volumes/kubernetes.io~empty-dir/<name>} get real
 * tmpfs mounts as a memory-backed emptyDir does, and a pod log directory beside it with kubelet's
 * {@code <namespace>_<name>_<uid>} entries. close() unmounts every volume and removes it all.
 * Used by the restart-loop benchmark alone; the scenario tests run a real kubelet ({@link KubeletNode}).
 *
 * <pre>{@code
 * try (KubeletLayout k = KubeletLayout.create()) {
 *   TmpfsMount dshm = k.volume(UID, "dshm", "size=4m");
 *   k.podLog("training", "llama-0", UID);
 *   Path config = TestConfig.write(k.runtimesYaml() + ...);
 * }
 * }</pre>
 */
public final class KubeletLayout implements AutoCloseable {
  private final Path dir;
  private final List<TmpfsMount> volumes = new ArrayList<>();

  private KubeletLayout(Path dir) {
    this.dir = dir;
  }

  public static KubeletLayout create() {
    Sandbox.require();
    try {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "kubelet-");
      Files.createDirectories(dir.resolve("kubelet/pods"));
      Files.createDirectories(dir.resolve("log/pods"));
      return new KubeletLayout(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** kubelet's --root-dir. */
  public Path kubeletRoot() {
    return dir.resolve("kubelet");
  }

  /** kubelet's pod log directory. */
  public Path podLogs() {
    return dir.resolve("log/pods");
  }

  /** The directory kubelet makes for emptyDir {@code name} of pod {@code uid}, made here without a mount. */
  public Path volumeDir(String uid, String name) {
    try {
      return Files.createDirectories(kubeletRoot().resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~empty-dir")
          .resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A memory-backed emptyDir: a tmpfs of {@code options} mounted at its directory, as kubelet mounts it. */
  public TmpfsMount volume(String uid, String name, String options) {
    TmpfsMount m = TmpfsMount.createAt(volumeDir(uid, name), options);
    volumes.add(m);
    return m;
  }

  /** kubelet's log directory of pod {@code namespace}/{@code name}. */
  public Path podLog(String namespace, String name, String uid) {
    try {
      return Files.createDirectories(podLogs().resolve(namespace + "_" + name + "_" + uid));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The {@code runtimes} section for this layout, kubelet's alone. */
  public String runtimesYaml() {
    return runtimesYaml(podLogs());
  }

  /** The {@code runtimes} section for this layout with {@code podLogs} as the pod log directory. */
  public String runtimesYaml(Path podLogs) {
    return "runtimes:\n  kubeletRoot: " + kubeletRoot() + "\n  podLogs: " + podLogs + "\n  dockerRoot: \"\"\n"
        + "  containerStorage: []\n";
  }

  public Path dir() {
    return dir;
  }

  @Override
  public void close() {
    for (int i = volumes.size() - 1; i >= 0; i--) {
      volumes.get(i).close();
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
