package org.shmguard.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.gpu.DriverVersion;

/**
 * Reads what the NVIDIA kernel driver publishes under /proc/driver/nvidia: its version (from
 * {@code version}) and its GPUs (one entry each under {@code gpus/}). A host without the driver
 * gives {@link HostGpus#unknown()}.
 */
public final class NvidiaProc {
  private NvidiaProc() {}

  public static HostGpus read(HostPaths paths) {
    Path base = paths.proc("driver", "nvidia");
    DriverVersion driver = null;
    try {
      driver = DriverVersion.fromProcText(Files.readString(base.resolve("version")));
    } catch (IOException | IllegalArgumentException e) {
      // no driver loaded, or a version line of a form not known: the advice says it assumed none
    }
    int gpus = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(base.resolve("gpus"))) {
      for (Path ignored : dir) {
        gpus++;
      }
    } catch (IOException e) {
      gpus = 0;
    }
    return new HostGpus(driver, gpus);
  }
}
