package org.shmguard.doctor;

import org.shmguard.nativ.Nvml;

/**
 * Where the doctor gets the GPUs' memory: NVML on a real host, fixed numbers in tests.
 */
@FunctionalInterface
public interface GpuMemoryReader {
  Nvml.Reading read();

  /** Reads through NVML (libnvidia-ml.so.1); a host without the driver gives a reading with an error. */
  static GpuMemoryReader nvml() {
    return Nvml::read;
  }
}
