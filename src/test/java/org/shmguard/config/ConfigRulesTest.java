package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/** Values that parse but make no sense, alone or together, are refused with the key that breaks the rule. */
class ConfigRulesTest {

  private static Config parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "test.yaml");
  }

  private static ConfigException refusal(String yaml) {
    try {
      parse(yaml);
    } catch (ConfigException e) {
      assertThat(e.format()).doesNotContain("\n");
      return e;
    }
    throw new AssertionError("accepted: " + yaml);
  }

  @ParameterizedTest
  @ValueSource(strings = {"*", "?*", "*?", "[a-z]*", "n*", "ncc*", ".*", "[n]ccl-*", "*nccl-*"})
  void aReapPatternThatMatchesAlmostAnyNameIsRefused(String pattern) {
    ConfigException e = refusal("reap:\n  patterns: [\"nccl-*\", \"" + pattern + "\"]\n");
    assertThat(e.line()).isEqualTo(2);
    assertThat(e.key()).isEqualTo("reap.patterns");
    assertThat(e.getMessage()).contains("\"" + pattern + "\" would match almost any name")
        .contains("allowed: a list of file name patterns such as \"nccl-*\"")
        .contains("each beginning with at least 4 literal characters before any * ? or [");
  }

  @ParameterizedTest
  @ValueSource(strings = {"nccl-*", "nccl*", "psm_*", "torch_*", "sem.mp-*", "vader_segment.*", "sm_segment.*",
      "ucx_shm_posix_*", "psm2_shm.*", "psm3_shm.*", "nccl-shm-send-*", "nccl-??????", "psm_[0-9a-f]*"})
  void everyProducerPrefixTheFileSuggestsIsAccepted(String pattern) throws Exception {
    assertThat(parse("reap:\n  patterns: [\"" + pattern + "\"]\n").reap().patterns()).containsExactly(Glob.of(pattern));
  }

  @Test
  void theDenyListMayBeBroad() throws Exception {
    assertThat(parse("reap:\n  deny: [\"*\"]\n").reap().deny()).containsExactly(Glob.of("*"));
  }

  @Test
  void aPatternAlsoDeniedIsRefusedAsNeverReaping() {
    assertThat(refusal("reap:\n  patterns: [\"psm_*\"]\n  deny: [\"psm_*\"]\n").format())
        .isEqualTo("test.yaml:3: reap.patterns: \"psm_*\" is also in reap.deny, so it would never reap anything; "
            + "allowed: patterns that reap.deny does not list");
  }

  @Test
  void aListOfMoreThan256ItemsIsRefused() {
    String many = IntStream.range(0, 257).mapToObj(i -> "\"nccl-" + i + "-*\"").collect(Collectors.joining(", "));
    assertThat(refusal("reap:\n  patterns: [" + many + "]\n").getMessage()).startsWith("the list has 257 items;").endsWith("at most 256 items");
  }

  @Test
  void aMountListedTwiceIsRefused() {
    assertThat(refusal("mounts: [auto, /dev/shm, /dev/shm]\n").getMessage()).startsWith("\"/dev/shm\" is listed twice;");
  }

  @Test
  void aRemountTargetAboveTheCapIsRefusedWhenBothAreInTheSameUnit() {
    assertThat(refusal("remount:\n  targetSize: 8G\n  maxSize: 4G\n").format())
        .isEqualTo("test.yaml:3: remount.targetSize: 8589934592 bytes is above remount.maxSize (4294967296 bytes), so every "
            + "remount would be capped; allowed: a size no larger than remount.maxSize");
    assertThat(refusal("remount:\n  maxSize: 20%\n  targetSize: 30%\n").line()).isEqualTo(3);
    // The default cap is 50% of memory: a target of a larger share is refused against it.
    assertThat(refusal("remount:\n  targetSize: 60%\n").key()).isEqualTo("remount.targetSize");
  }

  @Test
  void aRemountTargetAndCapInDifferentUnitsAreComparedOnlyOnTheHost() throws Exception {
    // Which is larger depends on the host's memory: the remount policy caps the target there, and says so.
    Config c = parse("remount:\n  targetSize: 64G\n  maxSize: 50%\n");
    assertThat(c.remount().targetSize()).isEqualTo(SizeSpec.ofBytes(64L << 30));
  }

  @Test
  void settlingLongerThanTheSweepIsRefused() {
    assertThat(refusal("daemon:\n  interval: 1s\n  settle: 2s\n").format())
        .isEqualTo("test.yaml:3: daemon.settle: 2s is not shorter than daemon.interval (1s): events would wait longer "
            + "than the full sweep; allowed: a duration below daemon.interval");
  }

  @Test
  void aDurationTooLargeForAnyClockIsOutOfRangeNotACrash() {
    assertThat(refusal("daemon:\n  interval: 999999999999999d\n").getMessage()).startsWith("999999999999999d is out of range;");
  }

  @Test
  void anAdviceSocketPathLongerThanAUnixSocketHoldsIsRefused() throws Exception {
    String dir = "/run/" + "d".repeat(90) + "/";
    String fits = dir + "s".repeat(106 - dir.length());
    assertThat(parse("advice:\n  socket: " + fits + "\n").advice().socket()).isEqualTo(Path.of(fits));

    ConfigException e = refusal("advice:\n  socket: " + fits + "x\n");
    assertThat(e.key()).isEqualTo("advice.socket");
    assertThat(e.getMessage()).startsWith("the path is 107 bytes long, too long for a Unix socket; allowed: ")
        .contains("at most 106 bytes long (a Unix socket's address holds 108 bytes, sun_path, and the JDK keeps 2 of them back)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"relative/advice.env", "/run/shmguard/../../etc/passwd", "/run//shmguard/advice.env",
      "/run/shmguard/./advice.env", "/run/shmguard/", "/"})
  void aPathRootWritesMustBePlainAndAbsolute(String path) {
    ConfigException e = refusal("advice:\n  envFile: \"" + path + "\"\n");
    assertThat(e.key()).isEqualTo("advice.envFile");
    assertThat(e.getMessage()).contains("; allowed: an absolute path without . or .. parts, // or a trailing /");
  }

  @Test
  void aPathWithANulOrANewlineIsRefusedNotACrash() {
    assertThat(refusal("advice:\n  socket: \"/run/a\\0b\"\n").getMessage()).startsWith("the path holds a control character (0x00);");
    assertThat(refusal("metrics:\n  textfile: \"/var/lib/x\\n.prom\"\n").format())
        .startsWith("test.yaml:2: metrics.textfile: the path holds a control character (0x0a);");
  }

  @Test
  void aPathPartLongerThanAFileNameMayBeIsRefused() {
    assertThat(refusal("advice:\n  envFile: /run/" + "n".repeat(256) + "\n").getMessage())
        .startsWith("a part of the path is longer than 255 bytes (NAME_MAX);");
  }

  @Test
  void aMountPathMustBePlainToo() {
    assertThat(refusal("mounts: [auto, /dev/shm/]\n").getMessage()).startsWith("\"/dev/shm/\" ends in /;");
    assertThat(refusal("mounts: [/dev/../dev/shm]\n").getMessage()).startsWith("\"/dev/../dev/shm\" has a \"..\" part;");
  }

  @Test
  void theTextfileMustBeOneNodeExporterReads() throws Exception {
    assertThat(refusal("metrics:\n  textfile: /var/lib/node_exporter/shmguard.txt\n").format())
        .isEqualTo("test.yaml:2: metrics.textfile: \"/var/lib/node_exporter/shmguard.txt\" does not end in .prom; allowed: an absolute "
            + "path without . or .. parts, // or a trailing /, ending in .prom (node_exporter's textfile collector reads only "
            + "*.prom), or \"\" to turn it off");
    assertThat(parse("metrics:\n  textfile: /var/lib/node_exporter/shmguard.prom\n").metrics().textfile())
        .isEqualTo("/var/lib/node_exporter/shmguard.prom");
  }

  @Test
  void twoFilesRootWritesMustNotShareAPath() {
    assertThat(refusal("advice:\n  socket: /run/shmguard/a\n  envFile: /run/shmguard/a\n").format())
        .isEqualTo("test.yaml:3: advice.envFile: is the same path as advice.socket; allowed: a path of its own");
    assertThat(refusal("advice:\n  envFile: /run/x.prom\nmetrics:\n  textfile: /run/x.prom\n").key()).isEqualTo("metrics.textfile");
  }

  @Test
  void aByteOrderMarkIsNotPartOfTheFirstKey(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("bom.yaml");
    Files.writeString(file, "\uFEFFreap:\n  grace: 7s\n");
    assertThat(ConfigLoader.load(file).reap().grace()).isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void theShippedFilePassesEveryRule() {
    assertThatCode(() -> ConfigLoader.load(Path.of("config/shmguard.yaml"))).doesNotThrowAnyException();
  }
}
