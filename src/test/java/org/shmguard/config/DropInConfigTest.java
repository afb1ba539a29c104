package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.text.Glob;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Sandbox;

/**
 * The drop-in directory as configuration management uses it: files in {@code shmguard.yaml.d/}
 * beside the main file, merged over it in byte order of their names, each checked like the main
 * file, through {@code ConfigLoader.resolve} (what every command calls for {@code --config}).
 */
class DropInConfigTest {

  @Test
  void dropInsMergeOverTheMainFileInByteOrderKeyByKey(@TempDir Path dir) throws Exception {
    Path main = write(dir.resolve("shmguard.yaml"), "reap:\n  grace: 1m\n  patterns: [\"nccl-*\", \"psm2_shm.*\"]\ncapacity:\n  warn: 70\n");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    write(d.resolve("10-observe.yaml"), "reap:\n  dryRun: true\n  grace: 10m\n");
    write(d.resolve("20-patterns.yaml"), "reap:\n  patterns: [\"nccl-*\"]\n");
    write(d.resolve("9-last.yaml"), "reap:\n  grace: 5s\n"); // "9" sorts after "20": byte order, not numeric
    write(d.resolve("30-ignored.yaml.dpkg-dist"), "reap:\n  grace: bad\n");
    write(d.resolve(".hidden.yaml"), "reap:\n  grace: bad\n");
    write(d.resolve("README"), "not yaml: [\n");

    Config c = ConfigLoader.resolve(main);

    assertThat(c.reap().dryRun()).as("set by 10-observe.yaml").isTrue();
    assertThat(c.reap().grace()).as("9-last.yaml comes last").isEqualTo(Duration.ofSeconds(5));
    assertThat(c.reap().patterns()).as("a list replaces the list before it").containsExactly(Glob.of("nccl-*"));
    assertThat(c.capacity().warn()).as("a key no drop-in sets keeps the main file's value").isEqualTo(70);
    assertThat(c.capacity().critical()).as("and one no file sets keeps the default").isEqualTo(95);
    assertThat(c.source()).isEqualTo(main + " + shmguard.yaml.d/10-observe.yaml + shmguard.yaml.d/20-patterns.yaml"
        + " + shmguard.yaml.d/9-last.yaml");
  }

  @Test
  void dropInsApplyOverTheDefaultsWhenThereIsNoMainFileAndNothingChangesWithoutThem(@TempDir Path dir) throws Exception {
    Path main = dir.resolve("shmguard.yaml");
    write(main, "reap:\n  grace: 1m\n");
    assertThat(ConfigLoader.resolve(main).withSource("")).isEqualTo(ConfigLoader.load(main).withSource(""));

    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    write(d.resolve("10-observe.yaml"), "reap:\n  dryRun: true\n");
    Config merged = ConfigLoader.merged(null, DropIns.list(d));
    assertThat(merged.reap().dryRun()).isTrue();
    assertThat(merged.reap().grace()).isEqualTo(Duration.ofMinutes(2));
    assertThat(merged.source()).isEqualTo("built-in defaults + shmguard.yaml.d/10-observe.yaml");
  }

  @Test
  void anErrorInADropInNamesTheDropInItsLineAndKeyAndEveryFileIsChecked(@TempDir Path dir) throws Exception {
    Path main = write(dir.resolve("shmguard.yaml"), "reap:\n  grace: soon\n");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    write(d.resolve("10-ok.yaml"), "reap:\n  dryRun: true\n");
    Path bad = write(d.resolve("20-bad.yaml"), "# observe only\nreap:\n  dryrun: true\n");

    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.lines()).containsExactly(
            main + ":2: reap.grace: \"soon\" is not a duration; allowed: a duration from 0ms to 30d: a whole number with a unit"
                + " ms, s, m, h or d (such as 500ms, 30s, 2m)",
            bad + ":3: reap.dryrun: unknown key (did you mean dryRun? keys are case-sensitive); allowed under reap: deny, dryRun,"
                + " examineLimit, examineTotal, grace, patterns, requireHostPidNamespace"));
  }

  @Test
  void aRuleBrokenAcrossFilesNamesTheFileThatSetTheLaterKey(@TempDir Path dir) throws Exception {
    Path main = write(dir.resolve("shmguard.yaml"), "capacity:\n  warn: 80\n  critical: 90\n");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    Path late = write(d.resolve("50-warn.yaml"), "\ncapacity:\n  warn: 92\n");

    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOfSatisfying(ConfigException.class, e -> {
      assertThat(e.source()).isEqualTo(late.toString());
      assertThat(e.line()).isEqualTo(3);
      assertThat(e.key()).isEqualTo("capacity.critical");
    });
  }

  @Test
  void theDaemonStopsWithStatus78OnABadDropInAndNamesIt(@TempDir Path dir) throws Exception {
    Path main = write(dir.resolve("shmguard.yaml"), "reap:\n  grace: 1m\n");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    Path bad = write(d.resolve("10-observe.yaml"), "reap:\n  dryRun: maybe\n");

    CliRun run = CliRun.of("daemon", "--config", main.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err().strip()).isEqualTo("shmguard: bad configuration: " + bad
        + ":2: reap.dryRun: \"maybe\" is not a boolean; allowed: true or false");
  }

  @Test
  void aDropInDirectoryOthersCanWriteIsRefusedWhenRunAsRoot(@TempDir Path dir) throws Exception {
    Sandbox.require();
    Path main = write(dir.resolve("shmguard.yaml"), "");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    write(d.resolve("10-observe.yaml"), "reap:\n  dryRun: true\n");
    Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxrwxrwx"));

    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOf(ConfigException.class)
        .hasToString(d + ": the directory is writable by every user (mode 0777), who could change what shmguard, running as"
            + " root, does; allowed: a directory owned by root that only root can write (chown root; chmod go-w)");
  }

  @Test
  void aDropInAnOrdinaryUserOwnsOrLinksToIsRefusedWhenRunAsRoot(@TempDir Path dir) throws Exception {
    Sandbox.require();
    Path main = write(dir.resolve("shmguard.yaml"), "");
    Path d = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
    Path users = write(d.resolve("10-user.yaml"), "reap:\n  dryRun: true\n");
    Files.setAttribute(users, "unix:uid", 65534);
    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOf(ConfigException.class)
        .hasToString(users + ": the file is owned by uid 65534, who could change what shmguard, running as root, does;"
            + " allowed: a file owned by root that only root can write (chown root; chmod go-w)");

    Files.delete(users);
    Path elsewhere = write(dir.resolve("users-own.yaml"), "reap:\n  dryRun: true\n");
    Files.setAttribute(elsewhere, "unix:uid", 65534);
    Path link = Files.createSymbolicLink(d.resolve("10-link.yaml"), elsewhere);
    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOf(ConfigException.class)
        .hasToString(link + ": the file is owned by uid 65534, who could change what shmguard, running as root, does;"
            + " allowed: a file owned by root that only root can write (chown root; chmod go-w)");
  }

  @Test
  void aFileAtTheDropInDirectorysPathIsAnError(@TempDir Path dir) throws Exception {
    Path main = write(dir.resolve("shmguard.yaml"), "");
    write(dir.resolve("shmguard.yaml.d"), "reap:\n  dryRun: true\n");

    assertThatThrownBy(() -> ConfigLoader.resolve(main)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("is not a directory");
  }

  private static Path write(Path file, String text) throws Exception {
    Files.writeString(file, text);
    return file;
  }
}
