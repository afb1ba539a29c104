package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.policy.family.FamilyRules;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.policy.family.SegmentFamilies;

/** The families section: each family's own keys, their shipped defaults, and their errors. */
class FamiliesConfigTest {
  private static Config parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "test.yaml");
  }

  @Test
  void theShippedDefaultsAreEachFamilysOwn() throws Exception {
    assertThat(ConfigLoader.defaults().reap().families()).isEqualTo(FamilyRules.defaults());
  }

  @Test
  void aFamilyTurnedOnKeepsTheOthersAtTheirDefaults() throws Exception {
    FamilyRules rules = parse("families:\n  pythonShm:\n    reap: true\n    grace: 30m\n").reap().families();
    var families = SegmentFamilies.standard();
    assertThat(rules.settings(families.named("pythonShm"))).isEqualTo(new FamilySettings(true, Duration.ofMinutes(30)));
    assertThat(rules.settings(families.named("openMpi"))).isEqualTo(new FamilySettings(false, Duration.ofMinutes(10)));
    assertThat(rules.settings(families.named("nccl"))).as("NCCL is configured by reap.*").isNull();
  }

  @Test
  void anUnknownFamilyIsRefusedWithTheAllowedNames() {
    assertThatThrownBy(() -> parse("families:\n  ray:\n    reap: true\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).format()).isEqualTo("test.yaml:2: families.ray: unknown key; "
            + "allowed under families: openMpi, psm3, pythonShm, pytorch, sglang, tritonPython, ucx, vllmOffload"));
  }

  @Test
  void anUnknownKeyInAFamilysSectionIsRefused() {
    assertThatThrownBy(() -> parse("families:\n  ucx:\n    patterns: [\"ucx_*\"]\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).format())
            .isEqualTo("test.yaml:3: families.ucx.patterns: unknown key; allowed under families.ucx: grace, reap"));
  }

  @Test
  void aBadGraceNamesItsKey() {
    assertThatThrownBy(() -> parse("families:\n  sglang:\n    grace: soon\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).format()).startsWith("test.yaml:3: families.sglang.grace: "));
  }
}
