package org.shmguard.model;

/**
 * What a holder can do with the file it holds, as the kernel shows it: the access mode of an fd
 * ("flags:" in /proc/PID/fdinfo/N) or the permissions of a mapping (/proc/PID/maps). It decides
 * whose exit is evidence about the file's job (policy.JobEvidence): a lookup proves nothing, a
 * reader of another uid proves nothing, a writer could have destroyed the file anyway.
 */
public enum Use {
  /** An O_PATH fd: a lookup by name, which opens nothing and needs no permission on the file. */
  LOOKUP,
  /** Opened read-only, or mapped without shared write access. */
  READ,
  /** Opened for writing, or mapped shared and writable: it can change or truncate the file. */
  WRITE,
  /** Not known (the kernel did not say, a fixture): counted as a reader. */
  UNKNOWN;

  /** The use an fd's octal "flags:" value gives; UNKNOWN for a negative (missing) value. */
  public static Use ofFdFlags(long flags) {
    if (flags < 0) {
      return UNKNOWN;
    }
    if ((flags & O_PATH) != 0) {
      return LOOKUP;
    }
    return (flags & O_ACCMODE) == O_RDONLY ? READ : WRITE;
  }

  /** The use a mapping's permissions ("rw-s") give: WRITE only for a shared, writable mapping. */
  public static Use ofMapPerms(boolean writable, boolean shared) {
    return writable && shared ? WRITE : READ;
  }

  /** O_PATH in fdinfo's octal flags: 010000000 on every architecture shmguard runs on (asm-generic/fcntl.h). */
  public static final long O_PATH = 010000000;
  private static final long O_ACCMODE = 3;
  private static final long O_RDONLY = 0;
}
