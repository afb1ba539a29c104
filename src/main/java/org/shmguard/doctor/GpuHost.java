package org.shmguard.doctor;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.shmguard.host.HostPaths;

/**
 * The host's NVIDIA GPUs and driver as the kernel module shows them: one directory per GPU under
 * /proc/driver/nvidia/gpus/ (named by PCI bus id) and the version line in
 * /proc/driver/nvidia/version. Both are absent on a host without the driver.
 *
 * <pre>{@code
 * GpuHost gpus = GpuHost.read(HostPaths.system());
 * if (gpus.hasGpu()) { ... gpus.count() ... gpus.driverVersion() ... }
 * }</pre>
 *
 * @param busIds PCI bus ids, sorted; empty without GPUs
 * @param driverVersion e.g. "570.124.06", or null when the version file is absent or unreadable
 * @param versionLine the first line of the version file, as evidence; null when absent
 */
public record GpuHost(List<String> busIds, String driverVersion, String versionLine) {
  /** "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Thu ..." or "... Open Kernel Module for x86_64  570.86.15  Release Build ...". */
  private static final Pattern VERSION = Pattern.compile("NVRM version:.*?\\s(\\d{3,}\\.\\d+(?:\\.\\d+)?)(?:\\s|$)");

  public GpuHost {
    busIds = List.copyOf(busIds);
  }

  public static GpuHost none() {
    return new GpuHost(List.of(), null, null);
  }

  public static GpuHost read(HostPaths paths) {
    Path dir = paths.proc("driver", "nvidia");
    List<String> ids = new ArrayList<>();
    try (DirectoryStream<Path> gpus = Files.newDirectoryStream(dir.resolve("gpus"))) {
      for (Path p : gpus) {
        ids.add(p.getFileName().toString());
      }
    } catch (IOException e) {
      // no driver, or no GPU: an empty list says so
    }
    ids.sort(null);
    String line;
    try {
      line = Files.readString(dir.resolve("version")).lines().findFirst().orElse(null);
    } catch (IOException e) {
      line = null; // no driver loaded: the version stays unknown
    }
    return new GpuHost(ids, line == null ? null : parseVersion(line), line);
  }

  /** The driver version in a version-file line, or null. */
  static String parseVersion(String line) {
    Matcher m = VERSION.matcher(line);
    return m.find() ? m.group(1) : null;
  }

  public int count() {
    return busIds.size();
  }

  public boolean hasGpu() {
    return !busIds.isEmpty();
  }

  /** The driver branch, the first number of the version (570 for 570.124.06), or -1 if unknown. */
  public int driverBranch() {
    if (driverVersion == null) {
      return -1;
    }
    int dot = driverVersion.indexOf('.');
    return Integer.parseInt(dot < 0 ? driverVersion : driverVersion.substring(0, dot));
  }
}
