package org.shmguard.model;

/**
 * One process holding one file, as the /proc pass found it.
 *
 * @param path the path the kernel reported, relative to the holder's root, "(deleted)" included
 * @param deleted whether the kernel marked the path as unlinked
 * @param bytes for a mapping, the mapped length; for an fd, the file size where known, else 0
 * @param use what the holder can do with the file (a lookup, read, write): whose exit counts as
 *     evidence about the file's job (policy.JobEvidence)
 */
public record HolderRef(int pid, Access access, String path, boolean deleted, long bytes, Use use) {
  public HolderRef {
    java.util.Objects.requireNonNull(use, "use");
  }

  /** A holder whose use the kernel did not tell (fixtures, an fd on a mount no mountinfo lists). */
  public HolderRef(int pid, Access access, String path, boolean deleted, long bytes) {
    this(pid, access, path, deleted, bytes, Use.UNKNOWN);
  }
}
