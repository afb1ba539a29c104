package org.shmguard.policy;

import java.util.Objects;

/**
 * The room in one shm tmpfs, as the advice engine needs it.
 *
 * @param name how a person names the mount ("/dev/shm", "trainer-1:/dev/shm")
 * @param dev its device, major:minor
 * @param freeBytes what a new file can still take (statvfs f_bavail)
 * @param reclaimableBytes files judged leaked, which {@code shmguard clean} would free
 */
public record MountSpace(String name, String dev, long sizeBytes, long freeBytes, long reclaimableBytes) {
  public MountSpace {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(dev, "dev");
    if (sizeBytes < 0 || freeBytes < 0 || reclaimableBytes < 0) {
      throw new IllegalArgumentException("sizes are not negative: size " + sizeBytes + ", free " + freeBytes
          + ", reclaimable " + reclaimableBytes);
    }
  }

  public long usedBytes() {
    return Math.max(0, sizeBytes - freeBytes);
  }

  /**
   * The room in {@code m} as {@code usage} measured it, with what {@code j} found leaked there
   * (what a clean would give back: not the files of a family that is only reported).
   */
  public static MountSpace of(org.shmguard.model.ShmMount m, org.shmguard.model.ShmMount.Usage usage,
      org.shmguard.policy.Judgement j) {
    long leaked = 0;
    for (org.shmguard.policy.Assessment a : j.segments()) {
      if (a.mount() != null && a.mount().dev().equals(m.dev()) && a.verdict() == org.shmguard.policy.Verdict.LEAKED
          && a.mayReap()) {
        leaked += a.segment().allocatedBytes();
      }
    }
    return new MountSpace(m.displayName(), m.dev().toString(), usage.sizeBytes(), usage.freeBytes(), leaked);
  }
}
