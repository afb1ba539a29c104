package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.shmguard.text.Glob;

class ConfigLoaderTest {

  private static Config parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "test.yaml");
  }

  private static Config withoutSource(Config c) {
    return c.withSource("");
  }

  @Test
  void builtInDefaultsAreExactlyTheShippedFile() throws Exception {
    Config shipped = ConfigLoader.load(Path.of("config/shmguard.yaml"));
    Config defaults = ConfigLoader.defaults();

    assertThat(withoutSource(defaults)).isEqualTo(withoutSource(shipped));
    assertThat(defaults.source()).isEqualTo("built-in defaults");
    assertThat(Files.readString(Path.of("config/shmguard.yaml")))
        .isEqualTo(new String(ConfigLoader.class.getResourceAsStream(ConfigLoader.DEFAULTS_RESOURCE).readAllBytes(),
            java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  void shippedFileSetsEveryKeyTheSchemaKnows() throws Exception {
    YamlNode root = YamlNode.parse(Files.newBufferedReader(Path.of("config/shmguard.yaml")), "shipped");
    assertThat(ConfigLoader.validate(root, "shipped").keySet()).containsExactlyInAnyOrderElementsOf(ConfigSchema.KEYS.keySet());
  }

  @Test
  void defaultsAreWhatTheDesignPromises() throws Exception {
    Config c = ConfigLoader.defaults();
    assertThat(c.mounts()).containsExactly("auto");
    assertThat(c.reap().grace()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.reap().patterns()).containsExactly(Glob.of("nccl-*"));
    assertThat(c.reap().deny()).containsExactly(Glob.of("cuda.shm.*"));
    assertThat(c.reap().dryRun()).isFalse();
    assertThat(c.reap().requireHostPidNamespace()).isTrue();
  }

  @Test
  void aFileSetsOnlyWhatItNamesAndKeepsTheOtherDefaults() throws Exception {
    Config c = parse("reap:\n  grace: 1s\n");
    assertThat(c.reap().grace()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.reap().patterns()).containsExactly(Glob.of("nccl-*"));
    assertThat(c.mounts()).containsExactly("auto");
    assertThat(c.daemon().interval()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.daemon().heartbeat()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void emptyFileAndEmptySectionKeepEveryDefault() throws Exception {
    assertThat(withoutSource(parse(""))).isEqualTo(withoutSource(ConfigLoader.defaults()));
    assertThat(withoutSource(parse("reap:\n"))).isEqualTo(withoutSource(ConfigLoader.defaults()));
  }

  @Test
  void aQuotedNumberIsANamePattern() throws Exception {
    Config c = parse("reap:\n  deny: [\"123\", '2024-01-01']\n  patterns: [\"12345\"]\n");
    assertThat(c.reap().deny()).containsExactly(Glob.of("123"), Glob.of("2024-01-01"));
    assertThat(c.reap().patterns()).containsExactly(Glob.of("12345"));
  }

  @Test
  void mountsMayNameTmpfsPathsBesideAuto() throws Exception {
    Config c = parse("mounts:\n  - auto\n  - /var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/shm\n");
    assertThat(c.autoDiscover()).isTrue();
    assertThat(c.mountPaths()).containsExactly("/var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/shm");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      unknown top-level key    | reaper:\\n  grace: 1s                | 1 | reaper   | unknown key; allowed at the top level: 
      unknown nested key       | reap:\\n  gracePeriod: 1s           | 2 | reap.gracePeriod | unknown key; allowed under reap: deny, dryRun, examineLimit, examineTotal, grace, patterns, requireHostPidNamespace
      duration without unit    | reap:\\n  grace: 120                | 2 | reap.grace | "120" is not a duration; allowed: a duration from 0ms to 30d
      duration in words        | reap:\\n  grace: two minutes        | 2 | reap.grace | is not a duration
      duration out of range    | daemon:\\n  interval: 10ms          | 2 | daemon.interval | 10ms is out of range; allowed: a duration from 100ms to 1d
      heartbeat out of range   | daemon:\\n  heartbeat: 50ms         | 2 | daemon.heartbeat | 50ms is out of range; allowed: a duration from 100ms to 1d
      heartbeat without unit   | daemon:\\n  heartbeat: 10           | 2 | daemon.heartbeat | "10" is not a duration; allowed: a duration from 100ms to 1d
      examine limit of zero    | reap:\\n  examineLimit: 0           | 2 | reap.examineLimit | 0 is out of range
      limit above the total    | reap:\\n  examineLimit: 30000       | 2 | reap.examineLimit | reap.examineLimit (30000) is more than reap.examineTotal (10000), the most files a pass keeps over all mounts; allowed: reap.examineLimit at most reap.examineTotal
      report limit negative    | namespaces:\\n  reportLimit: -1     | 2 | namespaces.reportLimit | -1 is out of range
      boolean                  | reap:\\n  dryRun: maybe             | 2 | reap.dryRun | "maybe" is not a boolean; allowed: true or false
      choice                   | log:\\n  level: verbose             | 2 | log.level | "verbose" is not allowed; allowed: one of error, warn, info, debug
      pattern with a slash     | reap:\\n  patterns: [\\"a/b*\\"]     | 2 | reap.patterns | must not contain '/'
      unclosed class           | reap:\\n  deny: [\\"nccl-[a\\"]      | 2 | reap.deny | unclosed '['
      list item as mapping     | reap:\\n  patterns:\\n    - a: b     | 2 | reap.patterns | every item must be a single value
      number as a deny pattern | reap:\\n  deny: [123]               | 2 | reap.deny | 123 is a number in YAML, not text; quote it ("123") if a name is meant; allowed: a list of file name patterns
      number as a pattern      | reap:\\n  patterns: [12345]         | 2 | reap.patterns | 12345 is a number in YAML, not text
      boolean as a deny pattern| reap:\\n  deny:\\n    - yes          | 2 | reap.deny | yes is a boolean in YAML, not text
      date as a deny pattern   | reap:\\n  deny: [2024-01-01]        | 2 | reap.deny | 2024-01-01 is a date in YAML, not text
      boolean as a mount       | mounts: [auto, true]               | 1 | mounts | true is a boolean in YAML, not text
      scalar for a list        | mounts: auto                       | 1 | mounts | a list is needed here
      relative mount           | mounts: [auto, dev/shm]            | 1 | mounts | "dev/shm" is neither auto nor an absolute path
      list for a scalar        | reap:\\n  grace: [1s]               | 2 | reap.grace | a single value is needed here, not a list
      scalar for a section     | reap: yes                          | 1 | reap | must be a mapping with the keys deny, dryRun, examineLimit, examineTotal, grace, patterns, requireHostPidNamespace
      empty value              | reap:\\n  grace:                    | 2 | reap.grace | no value given
      key given twice          | reap:\\n  grace: 1s\\n  grace: 2s    | 3 | reap.grace | given twice (first on line 2)
      """)
  void badValuesNameTheKeyTheLineAndWhatIsAllowed(String kind, String yaml, int line, String key, String message) {
    String text = yaml.replace("\\n", "\n").replace("\\\"", "\"");
    assertThatThrownBy(() -> parse(text))
        .isInstanceOfSatisfying(ConfigException.class, e -> {
          assertThat(e.line()).isEqualTo(line);
          assertThat(e.key()).isEqualTo(key);
          assertThat(e.format()).startsWith("test.yaml:" + line + ": " + key + ": ").contains(message);
        });
  }

  @Test
  void anUnknownKeyListsEverySectionAllowedThere() {
    assertThatThrownBy(() -> parse("reaper: {}\n")).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.getMessage()).contains(String.join(", ", ConfigSchema.childrenOf(""))).contains("reap"));
  }

  @Test
  void thresholdsInTheWrongOrderNameTheLineOfTheKeyThatBreaksTheRule() {
    assertThatThrownBy(() -> parse("capacity:\n  warn: 90\n  critical: 85\n"))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.format())
            .isEqualTo("test.yaml:3: capacity.critical: 85 must be above capacity.warn (90); allowed: a whole number from 91 to 100"));
    assertThatThrownBy(() -> parse("capacity:\n  hysteresis: 40\n  warn: 30\n"))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.line()).isEqualTo(3));
  }

  @Test
  void yamlSyntaxErrorsSayTheLine() {
    assertThatThrownBy(() -> parse("reap:\n  grace: 1s\n patterns: [\n"))
        .isInstanceOfSatisfying(ConfigException.class, e -> {
          assertThat(e.line()).isPositive();
          assertThat(e.getMessage()).startsWith("not valid YAML");
        });
  }

  @Test
  void aDocumentThatIsNotAMappingIsRefused() {
    assertThatThrownBy(() -> parse("- auto\n")).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.getMessage()).contains("must be a mapping of keys"));
  }

  @Test
  void aMissingFileIsAClearError(@TempDir Path dir) {
    assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("nope.yaml")))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.format()).endsWith("nope.yaml: no such file"));
  }
}
