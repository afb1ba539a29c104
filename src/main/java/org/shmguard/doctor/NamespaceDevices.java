package org.shmguard.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.host.HostPaths;
import org.shmguard.host.PathWalks;

/**
 * The NVIDIA devices a container sees: the {@code /dev/nvidiaN} nodes and IMEX channels in the
 * /dev of one of its processes, read through /proc/PID/root. The container runtimes (the NVIDIA
 * container toolkit, CDI, the Kubernetes device plugin) put exactly the granted GPUs' nodes there,
 * under the host's minor numbers, so the list says how many and which GPUs the container has.
 *
 * @param gpuMinors minors of /dev/nvidiaN, sorted
 * @param imexChannels numbers of /dev/nvidia-caps-imex-channels/channelN, sorted
 * @param readable false when /proc/PID/root/dev could not be read (the lists are then empty)
 */
public record NamespaceDevices(List<Integer> gpuMinors, List<Integer> imexChannels, boolean readable) {
  public NamespaceDevices {
    gpuMinors = List.copyOf(gpuMinors);
    imexChannels = List.copyOf(imexChannels);
  }

  /** How the doctor finds the devices of a pid's namespace; tests give fixed answers. */
  @FunctionalInterface
  public interface Lookup {
    NamespaceDevices of(int pid);

    /**
     * Reads /proc/PID/root/dev under the host root: a walk through the namespace's root, which
     * may be a filesystem that stopped answering, so it is bounded; then it counts as unreadable.
     */
    static Lookup from(HostPaths paths) {
      return pid -> {
        Path dev = paths.proc(Integer.toString(pid), "root", "dev");
        try {
          return PathWalks.shared().run(dev.toString(), () -> read(dev));
        } catch (IOException e) {
          return unreadable();
        }
      };
    }
  }

  public static NamespaceDevices unreadable() {
    return new NamespaceDevices(List.of(), List.of(), false);
  }

  static NamespaceDevices read(Path dev) {
    List<Integer> gpus = numbered(dev, "nvidia");
    if (gpus == null) {
      return unreadable();
    }
    List<Integer> channels = numbered(dev.resolve("nvidia-caps-imex-channels"), "channel");
    return new NamespaceDevices(gpus, channels == null ? List.of() : channels, true);
  }

  /** Numbers N of the entries named PREFIX + N in {@code dir}; null if the directory cannot be read. */
  private static List<Integer> numbered(Path dir, String prefix) {
    List<Integer> out = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        String name = p.getFileName().toString();
        if (name.startsWith(prefix) && name.length() > prefix.length() && name.length() < prefix.length() + 6
            && name.substring(prefix.length()).chars().allMatch(Character::isDigit)) {
          out.add(Integer.parseInt(name.substring(prefix.length())));
        }
      }
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | SecurityException e) {
      return null;
    }
    out.sort(null);
    return out;
  }

  public int gpuCount() {
    return gpuMinors.size();
  }
}
