package org.shmguard.policy.family;

/**
 * UCX's POSIX shared-memory transport: {@code ucx_shm_posix_<hex id>} (src/uct/sm/mm/posix/
 * mm_posix.c, UCT_POSIX_FILE_FMT "/ucx_shm_posix_%"PRIx64, in UCX_POSIX_DIR, /dev/shm by
 * default). With proc links on (UCX_POSIX_USE_PROC_LINK=y, the default) the file is unlinked at
 * once and peers attach through /proc/PID/fd: only hidden usage, attributed to its holders. With
 * them off the file stays named while the processes that mapped it live.
 */
public final class UcxFamily extends HeldForLife {
  @Override
  public String name() {
    return "ucx";
  }

  @Override
  public String producer() {
    return "UCX POSIX shared-memory transport (uct mm/posix)";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("ucx_shm_posix_") && fileName.length() > "ucx_shm_posix_".length();
  }

  @Override
  public String pattern() {
    return "ucx_shm_posix_*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "ucx";
  }

  @Override
  public String source() {
    return "openucx/ucx src/uct/sm/mm/posix/mm_posix.c (UCT_POSIX_FILE_FMT, use_proc_link)";
  }
}
