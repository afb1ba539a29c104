package org.shmguard.policy;

/**
 * What the act stage did with one remount, as the decide stage reads it (remedy's
 * {@code RemountOutcome} is one): its alert is made from this, in {@link OutcomeAlerts}.
 */
public interface RemountResult {
  /** The mount, as the alert names it. */
  String mount();

  /** The tmpfs was grown. */
  boolean grown();

  /** Nothing was asked of the tmpfs: it already holds what was needed (an info, not a refusal to warn about). */
  default boolean unneeded() {
    return false;
  }

  /** Something went wrong on the way (the mount is gone, the kernel refused the new size). */
  boolean failed();

  long fromBytes();

  long toBytes();

  /** Why: the policy's reason, or what went wrong. */
  String detail();

  String optionsBefore();

  String optionsAfter();

  /** One line for a log, a socket reply or a journal MESSAGE. */
  String summary();
}
