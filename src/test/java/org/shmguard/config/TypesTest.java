package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/**
 * The value types of configuration keys, read from real YAML: what each accepts, what it becomes,
 * and the sentence a bad value gets. (Which key takes which type, and the file/line/key of the
 * error, are ConfigRulesTest's.)
 */
class TypesTest {

  @Test
  void durationsTakeAWholeNumberAndAUnitWithinTheirRange() throws Exception {
    ValueType<Duration> d = Types.duration(Duration.ofMillis(100), Duration.ofDays(1));
    assertThat(d.parse(value("500ms"))).isEqualTo(Duration.ofMillis(500));
    assertThat(d.parse(value("2m"))).isEqualTo(Duration.ofMinutes(2));
    assertThat(d.parse(value("1d"))).isEqualTo(Duration.ofDays(1));
    assertThat(d.allowed()).startsWith("a duration from 100ms to 1d");
    assertRefused(d, "50ms", "50ms is out of range");
    assertRefused(d, "2 m", "\"2 m\" is not a duration");
    assertRefused(d, "1.5s", "\"1.5s\" is not a duration");
    assertRefused(d, "99999999999999999999d", "\"99999999999999999999d\" is not a duration");
    assertRefused(d, "9999999999999999d", "9999999999999999d is out of range");
  }

  @Test
  void sizesArePowersOf1024AndNeverOverflow() throws Exception {
    ValueType<Long> s = Types.size(1, Long.MAX_VALUE);
    assertThat(s.parse(value("64M"))).isEqualTo(64L << 20);
    assertThat(s.parse(value("2G"))).isEqualTo(2L << 30);
    assertThat(s.parse(value("2GiB"))).isEqualTo(2L << 30);
    assertThat(s.parse(value("4k"))).isEqualTo(4096L);
    assertThat(s.parse(value("1073741824"))).isEqualTo(1L << 30);
    assertThat(s.parse(value("512b"))).isEqualTo(512L);
    assertRefused(s, "0", "0 is out of range");
    assertRefused(s, "8388608T", "\"8388608T\" is not a size");
    assertRefused(s, "64X", "\"64X\" is not a size");
    assertRefused(s, "iB", "\"iB\" is not a size");
  }

  @Test
  void aSizeOrAPercentageOfMemory() throws Exception {
    ValueType<SizeSpec> s = Types.sizeOrPercent(1L << 20);
    assertThat(s.parse(value("25%"))).isEqualTo(SizeSpec.ofPercent(25));
    assertThat(s.parse(value("2G"))).isEqualTo(SizeSpec.ofBytes(2L << 30));
    assertRefused(s, "0%", "0% is out of range");
    assertRefused(s, "101%", "101% is out of range");
    assertRefused(s, "x%", "\"x%\" is not a percentage");
    assertRefused(s, "512k", "512k is out of range");
  }

  @Test
  void scalarsRefuseNothingAndStructure() throws Exception {
    ValueType<Integer> i = Types.integer(0, 10);
    assertThat(i.parse(value("7"))).isEqualTo(7);
    assertRefused(i, "11", "11 is out of range");
    assertRefused(i, "seven", "\"seven\" is not a whole number");
    assertThatThrownBy(() -> i.parse(yaml("v:\n").map().get("v"))).hasMessage("no value given");
    assertThatThrownBy(() -> i.parse(yaml("v: [1]\n").map().get("v"))).hasMessage("a single value is needed here, not a list");
    assertThatThrownBy(() -> i.parse(yaml("v: {a: 1}\n").map().get("v")))
        .hasMessage("a single value is needed here, not a mapping");

    assertThat(Types.bool().parse(value("TRUE"))).isTrue();
    assertRefused(Types.bool(), "yes please", "\"yes please\" is not a boolean");
    assertThat(Types.oneOf("journal", "log").parse(value("log"))).isEqualTo("log");
    assertRefused(Types.oneOf("journal", "log"), "syslog", "\"syslog\" is not allowed");
  }

  @Test
  void cronIsQuartzWithSecondsOrEmptyForNever() throws Exception {
    assertThat(Types.cron().parse(value("\"0 0 * * * ?\""))).isEqualTo("0 0 * * * ?");
    assertThat(Types.cron().parse(yaml("v:\n").map().get("v"))).isEmpty();
    assertRefused(Types.cron(), "\"every hour\"", "\"every hour\" is not a valid cron expression");
  }

  @Test
  void aListenAddressIsHostAndPortOrEmpty() throws Exception {
    ValueType<String> a = Types.listenAddress();
    for (String ok : List.of("127.0.0.1:9477", "\"[::1]:9477\"", "node-1.example:0", "\"\"", "\"[fe80::1%eth0]:9477\"")) {
      assertThat(a.parse(value(ok))).isEqualTo(ok.replace("\"", ""));
    }
    assertRefused(a, "9477", "\"9477\" is not host:port with a port from 0 (any free port) to 65535");
    assertRefused(a, "127.0.0.1:65536", "\"127.0.0.1:65536\" is not host:port with a port from 0 (any free port) to 65535");
    assertRefused(a, "\"::1:9477\"", "\"::1:9477\": an IPv6 address needs brackets, such as [::1]:9477");
    assertRefused(a, "256.0.0.1:9477", "\"256.0.0.1:9477\": \"256.0.0.1\" is not an IPv4 address such as 127.0.0.1");
    assertRefused(a, "\"[::g]:9477\"", "\"[::g]:9477\": \"[::g]\" is not an IPv6 address in brackets, such as [::1]");
    assertRefused(a, "under_score:9477", "\"under_score:9477\": \"under_score\" is neither an IP address nor a host name"
        + " (letters, digits and -, in dot-separated labels)");
  }

  @Test
  void reapPatternsMustBeginWithTheirProducersPrefix() throws Exception {
    List<Glob> globs = Types.reapPatterns().parse(yaml("v: [\"nccl-*\", \"psm_*\"]\n").map().get("v"));
    assertThat(globs).extracting(Glob::toString).containsExactly("nccl-*", "psm_*");
    assertThatThrownBy(() -> Types.reapPatterns().parse(yaml("v: [\"*\"]\n").map().get("v")))
        .hasMessage("\"*\" would match almost any name: it begins with no literal characters");
    assertThatThrownBy(() -> Types.reapPatterns().parse(yaml("v: [\"nc*\"]\n").map().get("v")))
        .hasMessage("\"nc*\" would match almost any name: it begins with only \"nc\"");
  }

  @Test
  void listItemsAreTextNotNumbersOrBooleansAndMountsAreNamedOnce() throws Exception {
    assertThatThrownBy(() -> Types.globs().parse(yaml("v: [123]\n").map().get("v")))
        .hasMessage("123 is a number in YAML, not text; quote it (\"123\") if a name is meant");
    assertThatThrownBy(() -> Types.globs().parse(yaml("v: [yes]\n").map().get("v")))
        .hasMessage("yes is a boolean in YAML, not text; quote it (\"yes\") if a name is meant");
    assertThat(Types.globs().parse(yaml("v: [\"123\"]\n").map().get("v"))).hasSize(1);
    assertThat(Types.globs().parse(yaml("v:\n").map().get("v"))).isEmpty();
    assertThatThrownBy(() -> Types.globs().parse(value("nccl-*"))).hasMessage("a list is needed here");

    assertThat(Types.mounts().parse(yaml("v: [auto, /dev/shm]\n").map().get("v"))).containsExactly("auto", "/dev/shm");
    assertThatThrownBy(() -> Types.mounts().parse(yaml("v: [/dev/shm, /dev/shm]\n").map().get("v")))
        .hasMessage("\"/dev/shm\" is listed twice");
    assertThatThrownBy(() -> Types.mounts().parse(yaml("v: [dev/shm]\n").map().get("v")))
        .hasMessage("\"dev/shm\" is neither auto nor an absolute path");
  }

  private static void assertRefused(ValueType<?> type, String yamlValue, String sentence) {
    assertThatThrownBy(() -> type.parse(value(yamlValue))).isInstanceOf(IllegalArgumentException.class).hasMessage(sentence);
  }

  private static YamlNode value(String yamlValue) throws ConfigException {
    return yaml("v: " + yamlValue + "\n").map().get("v");
  }

  private static YamlNode yaml(String text) throws ConfigException {
    return YamlNode.parse(new StringReader(text), "test.yaml");
  }
}
