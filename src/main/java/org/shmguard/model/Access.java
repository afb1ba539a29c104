package org.shmguard.model;

/** How a process holds a file. */
public enum Access {
  /** An open file descriptor. */
  FD,
  /** A memory mapping. */
  MAP;

  public String label() {
    return this == FD ? "fd" : "map";
  }
}
