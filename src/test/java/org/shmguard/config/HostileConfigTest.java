package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.RandomAccessFile;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.nativ.SmallFiles;
import org.shmguard.testing.Cmd;

/**
 * Files built to hurt the loader (too deep, too large, self-referencing, several documents, not
 * a file at all) are refused quickly, with one line naming the file, the line, the key where
 * there is one, and what is allowed; never a stack overflow, an out-of-memory or a wait.
 */
class HostileConfigTest {
  private static final Duration QUICKLY = Duration.ofSeconds(20);

  private static ConfigException refusal(String yaml) {
    return assertTimeoutPreemptively(QUICKLY, () -> {
      try {
        ConfigLoader.parse(new StringReader(yaml), "test.yaml");
      } catch (ConfigException e) {
        return e;
      }
      throw new AssertionError("accepted: " + yaml.substring(0, Math.min(200, yaml.length())));
    });
  }

  private static ConfigException refusal(Path file) {
    return assertTimeoutPreemptively(QUICKLY, () -> {
      try {
        ConfigLoader.load(file);
      } catch (ConfigException e) {
        return e;
      }
      throw new AssertionError("accepted: " + file);
    });
  }

  private static Consumer<ConfigException> says(int line, String key, String problem, String allowed) {
    return e -> {
      assertThat(e.line()).as(e.format()).isEqualTo(line);
      assertThat(e.key()).as(e.format()).isEqualTo(key);
      assertThat(e.format()).contains(problem).contains("; allowed: " + allowed).doesNotContain("\n");
    };
  }

  @Test
  void deepFlowNestingIsRefusedAtTheKeyNotWithAStackOverflow() {
    String yaml = "reap:\n  patterns: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n"; // just under the size limit
    assertThat(refusal(yaml)).satisfies(says(2, "reap.patterns", "nested more than 8 levels deep", "at most 8 levels"));
  }

  @Test
  void deepBlockNestingIsRefusedToo() {
    StringBuilder yaml = new StringBuilder("reap:\n");
    for (int i = 1; i < 300; i++) {
      yaml.append("  ".repeat(i)).append("k").append(i).append(":\n");
    }
    assertThat(refusal(yaml.toString())).satisfies(says(9, "reap.k1.k2.k3.k4.k5.k6.k7", "nested more than 8 levels deep", "at most 8 levels"));
  }

  @Test
  void aFileOverTheSizeLimitIsRefusedBeforeParsingOnTheLineThatPassesIt(@TempDir Path dir) throws Exception {
    Path big = dir.resolve("big.yaml");
    String line = "# " + "x".repeat(1021) + "\n"; // 1 KiB a line: the 257th passes 256 KiB
    Files.writeString(big, line.repeat(1024)); // 1 MiB

    assertThat(refusal(big)).satisfies(says(257, null, "larger than 262144 bytes", "a file of at most 262144 bytes"));
  }

  @Test
  void aSixteenMebibyteFileIsRefusedWithoutReadingIt(@TempDir Path dir) throws Exception {
    Path huge = dir.resolve("huge.yaml");
    try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
      f.setLength(16L << 20); // sparse: 16 MiB of NULs, none of it ever read
    }
    assertThat(refusal(huge)).satisfies(says(1, null, "larger than 262144 bytes", "a file of at most"));
    // The reader stops one byte past the limit, whatever the file's size.
    assertThat(SmallFiles.readAtMost(huge.toString(), 1000).bytes()).hasSize(1001);
  }

  @Test
  void textOverTheLimitGivenAsAReaderIsRefusedToo() {
    String head = "reap:\n  grace: 1s\n";
    String yaml = head + "#\n".repeat(ConfigLimits.MAX_BYTES);
    int passingLine = 3 + (ConfigLimits.MAX_BYTES - head.length()) / 2;
    assertThat(refusal(yaml)).satisfies(says(passingLine, null, "larger than", "a file of at most"));
  }

  @Test
  void aFileJustUnderTheLimitIsRead(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("padded.yaml");
    String head = "reap:\n  grace: 5s\n";
    Files.writeString(file, head + "#".repeat(ConfigLimits.MAX_BYTES - head.length() - 1) + "\n");
    assertThat(Files.size(file)).isEqualTo(ConfigLimits.MAX_BYTES);
    assertThat(ConfigLoader.load(file).reap().grace()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void anAliasBombIsRefusedAtItsFirstAnchor() {
    StringBuilder yaml = new StringBuilder("reap:\n  patterns: &a [\"nccl-*\", \"nccl-*\", \"nccl-*\", \"nccl-*\"]\n");
    String prev = "a";
    for (char c = 'b'; c <= 'z'; c++) {
      yaml.append("  ").append(c).append(": &").append(c).append(" [").append(("*" + prev + ", ").repeat(9)).append("*").append(prev).append("]\n");
      prev = String.valueOf(c);
    }
    assertThat(refusal(yaml.toString())).satisfies(says(2, "reap.patterns", "an anchor (&a)", "every value written out"));
  }

  @Test
  void anAliasIsRefusedRatherThanReadAsTheAnchorsName() {
    // Jackson hands an alias back as the anchor's name: "deny: *d" would silently mean the pattern "d".
    assertThat(refusal("reap:\n  grace: 1s\n  deny: *d\n")).satisfies(says(3, "reap.deny", "an alias (*d)", "every value written out"));
  }

  @Test
  void aTagIsRefused() {
    assertThat(refusal("reap:\n  grace: !!str 1s\n")).satisfies(says(2, "reap.grace", "a YAML tag (!!str)", "plain values"));
    assertThat(refusal("mounts: !custom [auto]\n")).satisfies(says(1, "mounts", "a YAML tag (!custom)", "plain values"));
  }

  @Test
  void aSecondDocumentIsRefusedAtItsMarker() {
    String yaml = "reap:\n  dryRun: true\n---\nreap:\n  dryRun: false\n";
    assertThat(refusal(yaml)).satisfies(says(3, "reap", "a second YAML document starts here", "one YAML document per file"));
    assertThat(refusal("reap:\n  dryRun: true\n---\n")).satisfies(says(3, null, "a second YAML document", "one YAML document"));
  }

  @Test
  void aLeadingDocumentMarkerIsOneDocument() throws Exception {
    assertThat(ConfigLoader.parse(new StringReader("---\nreap:\n  grace: 3s\n...\n"), "test.yaml").reap().grace())
        .isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void aKeyGivenTwiceIsRefusedAtAnyDepth() {
    assertThat(refusal("reap:\n  grace: 1s\nlog:\n  level: info\nreap:\n  dryRun: true\n"))
        .satisfies(e -> assertThat(e.format()).isEqualTo("test.yaml:5: reap: given twice (first on line 1)"));
    assertThat(refusal("reap: {grace: 1s, grace: 2s}\n"))
        .satisfies(e -> assertThat(e.format()).isEqualTo("test.yaml:1: reap.grace: given twice (first on line 1)"));
  }

  @Test
  void brokenYamlIsOneLineWithItsLine() {
    ConfigException e = refusal("reap:\n  grace: 1s\n patterns: [\n");
    assertThat(e.format()).isEqualTo("test.yaml:3: not valid YAML: this line's indentation matches no key above it: "
        + "indent it as deep as its siblings");
    assertThat(refusal("reap:\n\tgrace: 1s\n").format())
        .isEqualTo("test.yaml:2: not valid YAML: a tab where YAML allows only spaces; indent with spaces");
    assertThat(refusal("reap:\n  grace: \"1s\n").format())
        .isEqualTo("test.yaml:2: not valid YAML: a quoted value opened on line 2 is never closed");
  }

  @Test
  void controlCharactersAndBytesThatAreNotUtf8AreNamedWithTheirLine(@TempDir Path dir) throws Exception {
    assertThat(refusal("reap:\n  grace: 1s\u001b[2J\n")).satisfies(says(2, null, "the control character 0x1b", "UTF-8 text"));
    Path latin1 = dir.resolve("latin1.yaml");
    Files.write(latin1, "# caf\u00e9\nreap: {}\n# na\u00efve\n".getBytes(StandardCharsets.ISO_8859_1));
    assertThat(refusal(latin1)).satisfies(says(1, null, "byte 0xe9 is not UTF-8 text", "UTF-8 text"));
  }

  @Test
  void aKeyWithANewlineCannotSplitTheMessage() {
    assertThat(refusal("\"reap\\nfake: error\": 1\n").format()).startsWith("test.yaml:1: reap\\nfake: error: unknown key").doesNotContain("\n");
  }

  @Test
  void aFifoAtTheConfigPathIsRefusedAtOnceNeverWaitedOn(@TempDir Path dir) {
    Path fifo = dir.resolve("shmguard.yaml");
    Cmd.run("mkfifo", fifo.toString());
    assertThat(refusal(fifo)).satisfies(e -> assertThat(e.format())
        .isEqualTo(fifo + ": this path leads to a FIFO, which shmguard does not read; allowed: a regular file (or a link to one)"));
  }

  @Test
  void aLinkToAFifoOrADeviceOrADirectoryIsRefusedToo(@TempDir Path dir) throws Exception {
    Path fifo = dir.resolve("pipe");
    Cmd.run("mkfifo", fifo.toString());
    Path link = Files.createSymbolicLink(dir.resolve("shmguard.yaml"), fifo);
    assertThat(refusal(link).getMessage()).contains("a FIFO");
    assertThat(refusal(Path.of("/dev/zero")).getMessage()).contains("a character device");
    assertThat(refusal(dir).getMessage()).contains("a directory");
  }

  @Test
  void asRootAFileAnotherUserCanChangeIsRefused(@TempDir Path dir) throws Exception {
    assumeTrue(SmallFiles.effectiveUid() == 0, "the ownership rule applies when shmguard runs as root");
    Path file = dir.resolve("shmguard.yaml");
    Files.writeString(file, "reap:\n  grace: 1s\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(refusal(file)).satisfies(says(0, null, "writable by every user (mode 0666)", "a file owned by root that only root can write"));

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-r--"));
    assertThat(refusal(file).getMessage()).contains("writable by its group (mode 0664)");

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    Cmd.run("chown", "65534", file.toString());
    assertThat(refusal(file).getMessage()).contains("owned by uid 65534");

    Cmd.run("chown", "0", file.toString());
    assertThat(ConfigLoader.load(file).reap().grace()).isEqualTo(Duration.ofSeconds(1));
  }
}
