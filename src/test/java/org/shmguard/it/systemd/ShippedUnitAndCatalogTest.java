package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.alert.EventKind;
import org.shmguard.testing.Cmd;

/** The shipped systemd unit and journal catalog: valid for systemd, and covering every event. */
class ShippedUnitAndCatalogTest {
  private static final Path UNIT = Path.of("systemd/shmguard.service");
  private static final Path CATALOG = Path.of("systemd/shmguard.catalog");

  @Test
  void catalogExplainsEveryEventKindAndNothingElse() throws Exception {
    Set<String> ids = new HashSet<>();
    Matcher m = Pattern.compile("(?m)^-- ([0-9a-f]{32})$").matcher(Files.readString(CATALOG));
    while (m.find()) {
      ids.add(m.group(1));
    }
    Set<String> kinds = new HashSet<>();
    for (EventKind k : EventKind.values()) {
      kinds.add(k.messageId());
    }
    assertThat(kinds).hasSize(EventKind.values().length); // no MESSAGE_ID used twice
    assertThat(ids).isEqualTo(kinds);
  }

  @Test
  void journalctlAcceptsTheCatalog(@TempDir Path root) throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/journalctl")), "needs journalctl (Debian package systemd)");
    Path dir = Files.createDirectories(root.resolve("usr/lib/systemd/catalog"));
    Files.copy(CATALOG, dir.resolve("shmguard.catalog"));

    Cmd.run("journalctl", "--root=" + root, "--update-catalog");
    String listed = Cmd.run("journalctl", "--root=" + root, "--list-catalog");

    for (EventKind k : EventKind.values()) {
      assertThat(listed).contains(k.messageId() + " shmguard: ");
    }
  }

  @Test
  void unitPassesSystemdAnalyzeVerify() {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "needs systemd-analyze (Debian package systemd)");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/java")), "the unit's ExecStart is /usr/bin/java");

    Cmd.Result r = Cmd.exec("systemd-analyze", "verify", UNIT.toAbsolutePath().toString());

    assertThat(r.status()).as(r.err() + r.out()).isZero();
    assertThat(r.err() + r.out()).doesNotContain("shmguard.service:");
  }

  @Test
  void unitsDocumentationNamesPagesThePackagesInstall() throws Exception {
    String doc = Files.readAllLines(UNIT).stream().filter(l -> l.startsWith("Documentation=")).findFirst().orElseThrow();
    for (String uri : doc.substring("Documentation=".length()).split(" ")) {
      if (uri.startsWith("man:")) {
        assertThat(uri).isIn("man:shmguard(1)", "man:shmguard.yaml(5)", "man:shmguard-launch(1)");
      } else {
        // The packages copy docs/*.md to /usr/share/doc/shmguard/docs/ (pom.xml).
        assertThat(uri).startsWith("file:///usr/share/doc/shmguard/docs/");
        assertThat(Path.of("docs", uri.substring("file:///usr/share/doc/shmguard/docs/".length()))).isRegularFile();
      }
    }
  }

  @Test
  void unitKeepsTheHostsMountNamespace() throws Exception {
    String unit = Files.readString(UNIT);
    for (String option : new String[] {"ProtectSystem=", "ProtectHome=", "PrivateTmp=", "PrivateDevices=",
        "PrivateMounts=", "ProtectKernelTunables=", "ProtectKernelModules=", "ProtectControlGroups=", "ProtectProc=",
        "ReadOnlyPaths=", "ReadWritePaths=", "InaccessiblePaths=", "TemporaryFileSystem=", "BindPaths="}) {
      assertThat(unit.lines().filter(l -> !l.startsWith("#"))).as(option).noneMatch(l -> l.startsWith(option));
    }
    assertThat(unit).contains("Type=notify").contains("WatchdogSec=").contains("RestartPreventExitStatus=78");
  }

  @Test
  void ordinaryUsersLaunchersReachTheAdviceSocketWhateverTheUmask() throws Exception {
    String unit = Files.readString(UNIT);
    String socket = Files.readString(Path.of("systemd/shmguard.socket"));

    assertThat(unit.lines()).contains("RuntimeDirectory=shmguard", "RuntimeDirectoryMode=0755", "UMask=0077");
    assertThat(socket.lines()).contains("ListenStream=/run/shmguard/advice.sock", "SocketMode=0666", "DirectoryMode=0755");
  }

  @Test
  void unitExposureStaysAtMost4Point5() {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "needs systemd-analyze (Debian package systemd)");

    String out = Cmd.run("systemd-analyze", "security", "--offline=true", UNIT.toAbsolutePath().toString());

    Matcher m = Pattern.compile("Overall exposure level for shmguard.service: ([0-9.]+)").matcher(out);
    assertThat(m.find()).as(out).isTrue();
    assertThat(Double.parseDouble(m.group(1))).isLessThanOrEqualTo(4.5);
  }
}
