package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * metrics.listen: only its syntax is a configuration error (exit 78 at start); an address that is
 * well formed but busy or not on this host is the daemon's to alert and retry.
 */
class ListenAddressConfigTest {

  private static Config parse(String listen) throws ConfigException {
    return ConfigLoader.parse(new StringReader("metrics:\n  listen: \"" + listen + "\"\n"), "test.yaml");
  }

  @ParameterizedTest
  @ValueSource(strings = {"127.0.0.1:9477", "0.0.0.0:0", "[::1]:9477", "[::]:9477", "[fe80::1%1]:1", "[fe80::1%eth9]:9477", "localhost:9477",
      "node-7.example.org:9477", "192.0.2.1:65535", ""})
  void wellFormedAddressesAreAcceptedWhetherOrNotTheyCanBeBound(String listen) throws Exception {
    assertThat(parse(listen).metrics().listen()).isEqualTo(listen);
  }

  @ParameterizedTest
  @ValueSource(strings = {"9477", ":9477", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:http", "::1:9477", "[::1:9477",
      "[localhost]:9477", "[]:9477", "[fe80::1%]:9477", "[fe80::1%a/b]:9477", "300.0.0.1:9477", "127.0.0.1.1:9477", "1.2.3:9477", "my_host:9477", "-node:9477",
      "node..example:9477", "no space:9477"})
  void malformedAddressesAreRefusedWithTheKeyAndWhatIsAllowed(String listen) {
    try {
      parse(listen);
    } catch (ConfigException e) {
      assertThat(e.key()).isEqualTo("metrics.listen");
      assertThat(e.line()).isEqualTo(2);
      assertThat(e.format()).doesNotContain("\n").contains("host:port such as 127.0.0.1:9477");
      return;
    }
    throw new AssertionError("accepted: " + listen);
  }
}
