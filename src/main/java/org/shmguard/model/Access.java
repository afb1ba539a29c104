package org.shmguard.model;

/** How a process holds a file. */
public enum Access {
  /** An open file descriptor. */
  FD,
  /** A memory mapping. */
  MAP,
  /**
   * An open fd on a mount that no mountinfo read in the pass lists (a detached mount, a hugetlb
   * memfd's): its device is unknown, so it may be any watched file with its inode number.
   */
  FD_UNRESOLVED;

  public String label() {
    return switch (this) {
      case FD -> "fd";
      case MAP -> "map";
      case FD_UNRESOLVED -> "fd on a mount not in mountinfo";
    };
  }
}
