package org.shmguard.policy;

/** How full a mount is against the configured thresholds. */
public enum CapacityLevel {
  OK("ok"),
  WARNING("warning"),
  CRITICAL("critical");

  private final String label;

  CapacityLevel(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
