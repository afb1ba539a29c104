package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import org.shmguard.policy.Verdict;

/** A row of a family's table: the case, and what a person checking the verdict expects to see. */
record FamilyRow(FamilyCase given, Verdict verdict, boolean reaped, String reasonSays) {
  static FamilyRow row(FamilyCase given, Verdict verdict, boolean reaped, String reasonSays) {
    return new FamilyRow(given, verdict, reaped, reasonSays);
  }

  void check() {
    FamilyCase.Outcome o = given.judge();
    assertThat(o.verdict()).as("verdict of: %s (%s)", given, o.reason()).isEqualTo(verdict);
    assertThat(o.reaped()).as("reaped? %s (%s)", given, o.reason()).isEqualTo(reaped);
    assertThat(o.reason()).as("reason of: %s", given).contains(reasonSays);
  }

  @Override
  public String toString() {
    return given.toString();
  }
}
