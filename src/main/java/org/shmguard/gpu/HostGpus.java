package org.shmguard.gpu;


/**
 * What the host says about its GPUs: the NVIDIA driver (null when none is loaded or it cannot be
 * read) and the number of GPUs it lists (0 when unknown).
 */
public record HostGpus(DriverVersion driver, int gpuCount) {
  public HostGpus {
    if (gpuCount < 0) {
      throw new IllegalArgumentException("gpuCount is not negative: " + gpuCount);
    }
  }

  public static HostGpus unknown() {
    return new HostGpus(null, 0);
  }
}
