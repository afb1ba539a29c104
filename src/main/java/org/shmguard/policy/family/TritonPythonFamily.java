package org.shmguard.policy.family;

/**
 * The Triton Inference Server Python backend's regions: {@code triton_python_backend_shm_region_}
 * and an instance id (a counter in older releases, a UUID in newer ones), the prefix set in
 * python_be.cc (shared_memory_region_prefix). The server creates one per model instance and its
 * stub process maps it; both hold it while the instance lives. A killed server leaves them
 * (triton-inference-server/server #7481).
 */
public final class TritonPythonFamily extends HeldForLife {
  private static final String PREFIX = "triton_python_backend_shm_region_";

  @Override
  public String name() {
    return "tritonPython";
  }

  @Override
  public String producer() {
    return "Triton Inference Server, Python backend";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith(PREFIX) && fileName.length() > PREFIX.length();
  }

  @Override
  public String pattern() {
    return PREFIX + "*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "triton-python";
  }

  @Override
  public String source() {
    return "triton-inference-server/python_backend src/python_be.cc (shared_memory_region_prefix); server #7481";
  }
}
