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

  @Test
  void reapTrueForAFamilyWhoseNamesGiveTheirCreatorIsRefusedWithWhatToDo() {
    assertThatThrownBy(() -> parse("# mine\nfamilies:\n  pytorch:\n    reap: true\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).format()).isEqualTo("test.yaml:4: families.pytorch.reap: true is "
            + "refused: a pytorch file is already reaped once the creator its name gives is provably dead, with no "
            + "setting, and true could only add reaping a file whose creator lives, which may be on its way to a "
            + "receiver; remove the key or set it to false"));
    assertThatThrownBy(() -> parse("families:\n  sglang:\n    reap: true\n"))
        .satisfies(e -> assertThat(((ConfigException) e).format()).startsWith("test.yaml:3: families.sglang.reap: true is refused"));
  }

  @Test
  void aGraceTooShortForAHandOnIsRefusedForEveryHandedOnFamily() {
    for (String family : new String[] {"pytorch", "sglang", "pythonShm"}) {
      assertThatThrownBy(() -> parse("families:\n  " + family + ":\n    grace: 0s\n"))
          .isInstanceOf(ConfigException.class)
          .satisfies(e -> assertThat(((ConfigException) e).format()).isEqualTo("test.yaml:3: families." + family
              + ".grace: 0ms is shorter than 10s: " + family + " files are handed from one process to another by name "
              + "and wait unheld on the way, so a shorter grace would reap them before their receiver opens them; "
              + "allowed: a duration from 10s to 30d"));
    }
    assertThatThrownBy(() -> parse("families:\n  pythonShm:\n    reap: true\n    grace: 9s\n"))
        .satisfies(e -> assertThat(((ConfigException) e).format()).startsWith("test.yaml:4: families.pythonShm.grace: 9s is shorter than 10s"));
  }

  @Test
  void pythonSharedMemoryMayStillBeReapedByAgeWithAGraceOfAtLeastTenSeconds() throws Exception {
    FamilyRules rules = parse("families:\n  pythonShm:\n    reap: true\n    grace: 10s\n").reap().families();
    assertThat(rules.settings(SegmentFamilies.standard().named("pythonShm")))
        .isEqualTo(new FamilySettings(true, Duration.ofSeconds(10)));
  }
}
