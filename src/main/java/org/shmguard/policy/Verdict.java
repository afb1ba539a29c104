package org.shmguard.policy;

/** What shmguard concludes about one segment. */
public enum Verdict {
  /** Some process has it open or mapped. */
  HELD("held"),
  /** Nobody holds it, but it changed too recently to call it leaked. */
  GRACE("grace"),
  /** Nobody holds it and it is old enough, or its last holders have exited. */
  LEAKED("leaked"),
  /**
   * Nobody holds it and its grace has passed, but its job is alive and may still receive it (a
   * PyTorch batch registered with a live torch_shm_manager of its owner, {@link WaitingInJob}).
   */
  WAITING("waiting"),
  /** A 0-byte NCCL file nobody holds: what a failed extension on a full tmpfs leaves. */
  FAILED_CREATION("failed-creation"),
  /** Not shmguard's to touch: no pattern allows it, the deny list names it, or it has other links. */
  IGNORED("ignored");

  private final String label;

  Verdict(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  public boolean reapable() {
    return this == LEAKED || this == FAILED_CREATION;
  }

  @Override
  public String toString() {
    return label;
  }
}
