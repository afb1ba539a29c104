package org.shmguard.remedy;

import org.shmguard.policy.Assessment;

/** What happened to one candidate of a reap plan, with the evidence it was judged on. */
public record ReapOutcome(Assessment candidate, Result result, String detail) {
  public enum Result {
    REAPED("reaped"),
    WOULD_REAP("would-reap"),
    SKIPPED("skipped"),
    FAILED("failed");

    private final String label;

    Result(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }
}
