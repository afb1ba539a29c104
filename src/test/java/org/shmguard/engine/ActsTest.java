package org.shmguard.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.host.HostPaths;
import org.shmguard.testing.TestConfig;

/** The engine's act stage: the one-shot commands' engine, and a daemon without a remounter, grow nothing. */
class ActsTest {
  @Test
  void withoutARemounterARemountIsNotCarriedOutAndHasNoOutcome() {
    Actor actor = Engine.create(TestConfig.parse("mounts: [auto]\n"), HostPaths.system()).actor();

    assertThat(actor).isInstanceOf(Acts.class);
    assertThat(((Acts) actor).remounter()).isNull();
    assertThat(actor.remount(Fixtures.MOUNT, null, "it passed the critical threshold")).isNull();
  }
}
