package org.shmguard.remedy;

/**
 * What one remount request came to, with the mount's options before and after as mountinfo
 * showed them.
 */
public record RemountOutcome(Result result, String mount, long fromBytes, long toBytes, String detail,
    String optionsBefore, String optionsAfter) implements org.shmguard.policy.RemountResult {

  /** UNNEEDED: the mount already holds what was asked (a container's own --shm-size is enough); nothing is wrong. */
  public enum Result { GROWN, REFUSED, UNNEEDED, FAILED }

  @Override
  public boolean unneeded() {
    return result == Result.UNNEEDED;
  }

  @Override
  public boolean grown() {
    return result == Result.GROWN;
  }

  @Override
  public boolean failed() {
    return result == Result.FAILED;
  }

  @Override
  public String summary() {
    return switch (result) {
      case GROWN -> "grew " + mount + " from " + org.shmguard.text.Bytes.human(fromBytes) + " to "
          + org.shmguard.text.Bytes.human(toBytes) + "; options now " + optionsAfter;
      case REFUSED, UNNEEDED -> "did not remount " + mount + ": " + detail;
      case FAILED -> "failed to remount " + mount + ": " + detail;
    };
  }
}
