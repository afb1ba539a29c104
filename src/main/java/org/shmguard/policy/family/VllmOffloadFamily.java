package org.shmguard.policy.family;

/**
 * vLLM's CPU KV-cache offload region: {@code vllm_offload_<instance>.mmap}, one file per engine
 * instance, created by the first tensor-parallel worker with O_EXCL and mapped in full by every
 * worker for the engine's life (vllm/v1/kv_offload, the mmap region's docstring). A dead
 * EngineCore cannot unlink it, and the next start on the same emptyDir fails on it (vLLM #54002).
 */
public final class VllmOffloadFamily extends HeldForLife {
  @Override
  public String name() {
    return "vllmOffload";
  }

  @Override
  public String producer() {
    return "vLLM CPU KV-cache offload";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("vllm_offload_") && fileName.endsWith(".mmap")
        && fileName.length() > "vllm_offload_.mmap".length();
  }

  @Override
  public String pattern() {
    return "vllm_offload_*.mmap";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "vllm-offload";
  }

  @Override
  public String source() {
    return "vllm-project/vllm KV offload mmap region (/dev/shm/vllm_offload_{instance_id}.mmap); vllm #54002";
  }
}
