package org.shmguard.doctor;

import com.fasterxml.jackson.annotation.JsonValue;

/** How bad a finding is; the doctor exits 1 when any finding is an error or a warning. */
public enum Severity {
  /** Jobs fail now, or will at their next start. */
  ERROR("error"),
  /** A risk, or a problem that fails jobs only in some conditions. */
  WARNING("warning"),
  /** Something to know, or a check that could not run here; not a problem. */
  INFO("info");

  private final String label;

  Severity(String label) {
    this.label = label;
  }

  @JsonValue
  public String label() {
    return label;
  }

  /** Errors and warnings make the doctor exit 1; notes do not. */
  public boolean isProblem() {
    return this != INFO;
  }

  /** The less severe of this and {@code cap}: a finding resting on an assumption is capped at a warning. */
  public Severity atMost(Severity cap) {
    return compareTo(cap) < 0 ? cap : this;
  }
}
