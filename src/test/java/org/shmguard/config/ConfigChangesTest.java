package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import java.lang.reflect.RecordComponent;
import org.junit.jupiter.api.Test;

/** What a reload applies and what waits for a restart, named as the keys in the file. */
class ConfigChangesTest {

  private static Config parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "reloaded.yaml");
  }

  @Test
  void changedKeysAreNamedAsInTheFileAndSortedIntoAppliedAndRestart() throws Exception {
    Config running = ConfigLoader.defaults();
    Config loaded = parse("mounts: [auto, /srv/shm]\nreap:\n  dryRun: true\nfamilies:\n  ucx:\n    reap: true\n"
        + "metrics:\n  listen: \"0.0.0.0:9477\"\nadvice:\n  socket: /run/sg/advice.sock\ndaemon:\n  interval: 10s\n");

    assertThat(ConfigChanges.between(running, loaded)).containsExactlyInAnyOrder("mounts", "reap.dryRun", "families",
        "metrics.listen", "advice.socket", "daemon.interval");
    assertThat(ConfigChanges.between(running, loaded).stream().filter(ConfigChanges::needsRestart))
        .containsExactlyInAnyOrder("metrics.listen", "advice.socket", "daemon.interval");

    Config now = ConfigChanges.reloaded(running, loaded);
    assertThat(now.reap().dryRun()).isTrue();
    assertThat(now.mountPaths()).containsExactly("/srv/shm");
    assertThat(now.metrics()).isEqualTo(running.metrics());
    assertThat(now.advice()).isEqualTo(running.advice());
    assertThat(now.daemon()).isEqualTo(running.daemon());
    assertThat(ConfigChanges.between(now, loaded)).as("only what waits for a restart still differs")
        .containsExactlyInAnyOrder("metrics.listen", "advice.socket", "daemon.interval");
  }

  /** Every name a change can be reported under is a key an operator can find in the file and the reference. */
  @Test
  void everySectionFieldIsAKeyOfTheSchema() {
    for (RecordComponent section : Config.class.getRecordComponents()) {
      if (!section.getType().isRecord()) {
        continue;
      }
      for (RecordComponent field : section.getType().getRecordComponents()) {
        if (!field.getName().equals("families")) {
          assertThat(ConfigSchema.KEYS).as("the schema").containsKey(section.getName() + "." + field.getName());
        }
      }
    }
  }
}
