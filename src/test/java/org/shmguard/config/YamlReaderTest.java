package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.StringReader;
import org.junit.jupiter.api.Test;

class YamlReaderTest {
  private static ConfigException refusal(String yaml) {
    return catchThrowableOfType(() -> YamlNode.parse(new StringReader(yaml), "test.yaml"), ConfigException.class);
  }

  @Test
  void aCharacterYamlDoesNotAllowIsNamedWithItsLine() {
    assertThat(refusal("reap:\n  grace: 1s\n  deny: [\"\uFFFE\"]\n").format())
        .isEqualTo("test.yaml:3: not valid YAML: special characters are not allowed");
  }

  @Test
  void aTagOrAnAnchorOnAKeyIsRefusedLikeOneOnAValue() {
    assertThat(refusal("reap:\n  !!str grace: 1s\n").format()).startsWith("test.yaml:2: reap.grace: a YAML tag (!!str)");
    assertThat(refusal("&k reap: {}\n").format()).startsWith("test.yaml:1: reap: an anchor (&k)");
  }

  @Test
  void plainEmptyTildeAndNullAreNullWhileAQuotedEmptyStringIsText() throws Exception {
    YamlNode root = YamlNode.parse(new StringReader("a:\nb: ~\nc: null\nd: \"\"\ne: 'null'\n"), "test.yaml");
    assertThat(root.map().get("a").isNull()).isTrue();
    assertThat(root.map().get("b").isNull()).isTrue();
    assertThat(root.map().get("c").isNull()).isTrue();
    assertThat(root.map().get("d").text()).isEmpty();
    assertThat(root.map().get("e").text()).isEqualTo("null");
    assertThat(root.map().get("e").line()).isEqualTo(5);
  }
}
