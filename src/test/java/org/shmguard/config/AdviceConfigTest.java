package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.text.SizeSpec;

class AdviceConfigTest {
  @Test
  void defaultsKeepRemountOffAndTheSocketUnderRun() throws Exception {
    Config c = ConfigLoader.defaults();

    assertThat(c.remount().enabled()).isFalse();
    assertThat(c.remount().maxSize()).isEqualTo(SizeSpec.ofPercent(50));
    assertThat(c.remount().targetSize()).isEqualTo(SizeSpec.ofBytes(2L << 30));
    assertThat(c.remount().cooldown()).isEqualTo(Duration.ofMinutes(10));
    assertThat(c.advice().socket()).isEqualTo(Path.of("/run/shmguard/advice.sock"));
    assertThat(c.advice().envFile()).isEqualTo(Path.of("/run/shmguard/advice.env"));
  }

  @Test
  void sizesTakeBytesOrAPercentageOfMemory() throws Exception {
    Config c = ConfigLoader.parse(new StringReader("remount:\n  targetSize: 25%\n  maxSize: 4G\n"), "test.yaml");

    assertThat(c.remount().targetSize()).isEqualTo(SizeSpec.ofPercent(25));
    assertThat(c.remount().maxSize()).isEqualTo(SizeSpec.ofBytes(4L << 30));
  }

  @Test
  void aBadValueNamesFileLineAndKey() {
    assertThatThrownBy(() -> ConfigLoader.parse(new StringReader("remount:\n  enabled: true\n  maxSize: 150%\n"), "test.yaml"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).format()).contains("test.yaml:3: remount.maxSize"));
    assertThatThrownBy(() -> ConfigLoader.parse(new StringReader("advice:\n  socket: relative.sock\n"), "test.yaml"))
        .satisfies(e -> assertThat(((ConfigException) e).format()).contains("test.yaml:2: advice.socket"));
  }
}
