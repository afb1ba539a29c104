package org.shmguard.view;

import java.time.Duration;
import org.shmguard.policy.Judgement;

/**
 * Where a scan's output came from, part of {@code scan --json} as {@code "source"}: the
 * daemon's pass (when it began, whether it is stale, the limit) or this command's own pass
 * (and why the daemon did not answer).
 */
public record ScanSource(boolean daemon, String passAt, Boolean stale, Long staleAfterSeconds, String why) {
  public static ScanSource daemon(Judgement j, boolean stale, Duration staleAfter) {
    return new ScanSource(true, j.snapshot().takenAt().toString(), stale, staleAfter.toSeconds(), null);
  }

  public static ScanSource local(String why) {
    return new ScanSource(false, null, null, null, why);
  }

  /**
   * The first line of the text form of a daemon's answer: "From the shmguard daemon's last pass,
   * at 2026-11-28T12:28:44Z; shmguard scan --local makes a fresh one here".
   */
  public String line() {
    String at = java.time.Instant.parse(passAt).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    return "From the shmguard daemon's last pass, at " + at + (Boolean.TRUE.equals(stale)
        ? ": STALE, older than " + staleAfterSeconds + "s (its passes may have stopped)" : "")
        + "; shmguard scan --local makes a fresh one here";
  }
}
