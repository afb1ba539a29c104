package org.shmguard.gpu;

/** A CUDA version as the driver API reports it (cuDriverGetVersion 12060 is 12.6). */
public record CudaVersion(int major, int minor) implements Comparable<CudaVersion> {
  public CudaVersion {
    if (major < 0 || minor < 0) {
      throw new IllegalArgumentException("CUDA version parts are not negative: " + major + "." + minor);
    }
  }

  public static CudaVersion of(int major, int minor) {
    return new CudaVersion(major, minor);
  }

  public boolean atLeast(CudaVersion other) {
    return compareTo(other) >= 0;
  }

  @Override
  public int compareTo(CudaVersion o) {
    int c = Integer.compare(major, o.major);
    return c != 0 ? c : Integer.compare(minor, o.minor);
  }

  @Override
  public String toString() {
    return major + "." + minor;
  }
}
