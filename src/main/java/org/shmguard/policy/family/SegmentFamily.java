package org.shmguard.policy.family;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * One producer's files in a shm tmpfs, and the rules that say when one of them is leaked. Each
 * family is one class; {@link SegmentFamilies#standard()} lists them, as the doctor's
 * {@code Doctor.standard()} lists its checks.
 *
 * <pre>{@code
 * SegmentFamily f = SegmentFamilies.standard().of("psm_1a2b3c4d");   // PythonSharedMemory
 * f.holdersExitedMeansLeaked();                                       // false: its creator may hand it on
 * }</pre>
 *
 * <p>Every rule here is only ever a reason to call a file leaked: whatever a family says, a file
 * is reaped only when no process holds it over a complete /proc pass (DESIGN.md, rule 1).
 */
public interface SegmentFamily {
  /** The family's key in the configuration ({@code families.<name>.reap}) and in reports. */
  String name();

  /** Who makes these files, for people. */
  String producer();

  /** Whether {@code fileName} is one of this family's names, by its exact format. */
  boolean matches(String fileName);

  /** The shell pattern an operator would write for these names (docs, the example configuration). */
  String pattern();

  /** What made the file, by its name and size; a label for people, no decision rests on it. */
  default String kind(String fileName, long sizeBytes) {
    return name();
  }

  /**
   * Whether "every process seen holding it has exited" is enough to call it leaked at once. True
   * where the creator holds the file for its whole useful life (NCCL); false where a creator may
   * hand the file on and exit (Python shared memory), so only the grace applies.
   */
  boolean holdersExitedMeansLeaked();

  /** Whether an unheld file of this size is what a failed creation leaves (NCCL's 0-byte files). */
  default boolean failedCreation(long sizeBytes) {
    return false;
  }

  /**
   * The pid of the process that created the file, where the name carries it; empty otherwise. A
   * creator pid that is provably dead is the evidence that lets a family be reaped by default.
   */
  default OptionalInt creatorPid(String fileName) {
    return OptionalInt.empty();
  }

  /** Whether every one of its names gives its creator's pid ({@link #creatorPid}), as PyTorch's and SGLang's do. */
  default boolean namesItsCreator() {
    return false;
  }

  /**
   * Whether every file of this family is registered with its job's {@code torch_shm_manager},
   * which unlinks it once its last client has gone: then a live manager of the file's owner that
   * still has clients means the file may yet be received (policy.WaitingInJob). PyTorch's only.
   */
  default boolean registeredWithTorchManager() {
    return false;
  }

  /** How long an unheld file must be unchanged before it counts as leaked; null: {@code reap.grace}. */
  Duration defaultGrace();

  /**
   * Whether its leaked files are reaped with no configuration at all. Only NCCL's are; the others
   * are reaped when their creator is provably dead, on a volume whose every writer has exited
   * ({@link #reapedOnceWritersGone}), or when the configuration turns them on.
   */
  boolean reapedByDefault();

  /**
   * Whether its leaked files are reaped with no configuration once every writer of their volume has
   * exited (policy.WritersGone: a pod's or a container's tmpfs that no process holds anything on,
   * whose containers are gone), and whether such an unheld file counts as leaked at once there. A
   * name's creator must still be provably dead where the name gives one. True for the families
   * whose files are useless once nothing holds them, or whose names prove their creator dead.
   */
  default boolean reapedOnceWritersGone() {
    return reapedByDefault();
  }

  /** Where the facts above were read (project, file), for the docs and for anyone who doubts them. */
  String source();

  /** Parses a decimal pid of at most 9 digits, the form every family writes; empty for anything else. */
  static OptionalInt pid(String digits) {
    if (digits.isEmpty() || digits.length() > 9 || digits.charAt(0) == '0') {
      return OptionalInt.empty();
    }
    for (int i = 0; i < digits.length(); i++) {
      if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
        return OptionalInt.empty();
      }
    }
    int p = Integer.parseInt(digits);
    return p > 0 ? OptionalInt.of(p) : OptionalInt.empty();
  }
}
