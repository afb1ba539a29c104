package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.LogTail;
import org.shmguard.testing.Sandbox;

/**
 * The shipped unit booted for real: a Debian root made once with debootstrap (cached in
 * /var/cache/shmguard/bookworm-root), booted with systemd-nspawn (read-only, changes in an
 * overlay), where a check unit runs after shmguard.service and writes what systemctl and
 * journalctl say into a directory the test reads. The JDK is the host's, bound read-only.
 */
class SystemdBootTest {
  private static final Path ROOT = Path.of("/var/cache/shmguard/bookworm-root");
  private static final Path UNIT = Path.of("systemd/shmguard.service").toAbsolutePath();
  private static final String CHECK = """
      [Unit]
      Description=shmguard boot test: report what systemd and the journal say, then power off
      Wants=shmguard.service
      After=shmguard.service
      [Service]
      Type=oneshot
      ExecStart=/bin/sh -c 'systemctl is-active shmguard > /results/active; \
      systemctl show -p StatusText shmguard > /results/show; \
      stat -c "%%a %%U %%F" /run/shmguard /run/shmguard/advice.sock > /results/modes; \
      /usr/bin/java -XX:TieredStopAtLevel=1 -cp @CP@ org.shmguard.cli.Main scan --daemon-only > /results/scan 2>&1; \
      /bin/sh /reload-check.sh; \
      journalctl -b -o json --no-pager _SYSTEMD_UNIT=shmguard.service > /results/journal.json; \
      journalctl -b -o json --no-pager SHMGUARD_EVENT=mount_added > /results/events.json; \
      systemctl stop shmguard; systemctl show -p Result -p ExecMainStatus shmguard > /results/stopped'
      ExecStopPost=/bin/systemctl poweroff --no-block
      """;
  /** systemctl reload with a typo in a drop-in, then without it: what an operator's "systemctl reload shmguard && echo ok" sees. */
  private static final String RELOAD_CHECK = """
      printf '# a typo\\nreap:\\n  dryRun: yes please\\n' > /etc/shmguard/shmguard.yaml.d/30-bad.yaml
      systemctl reload shmguard > /results/reload-bad 2>&1; echo "exit $?" >> /results/reload-bad
      systemctl status --no-pager -n 0 shmguard > /results/status-bad 2>&1
      rm /etc/shmguard/shmguard.yaml.d/30-bad.yaml
      systemctl reload shmguard > /results/reload-good 2>&1; echo "exit $?" >> /results/reload-good
      """;

  @Test
  void unitStartsReadyUnderSystemdLogsToTheJournalAndStopsCleanly() throws Exception {
    Sandbox.require();
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-nspawn")), "needs systemd-nspawn (Debian package systemd-container)");
    Path java = Path.of(Sandbox.javaBinary()).toRealPath();
    Path jdk = java.getParent().getParent();
    prepareRoot(java);
    Path work = Files.createDirectories(Sandbox.MOUNTS.resolve("boot-" + ProcessHandle.current().pid()));
    Path results = Files.createDirectories(work.resolve("results"));
    try {
      Path check = work.resolve("shmguard-boot-check.service");
      Files.writeString(check, CHECK.replace("@CP@", System.getProperty("java.class.path")));
      Path reloadCheck = Files.writeString(work.resolve("reload-check.sh"), RELOAD_CHECK);
      Path etc = Files.createDirectories(work.resolve("etc-shmguard/shmguard.yaml.d")).getParent();
      Files.writeString(etc.resolve("shmguard.yaml"), "reap:\n  grace: 1h\n");
      List<String> cmd = new ArrayList<>(List.of("systemd-nspawn", "-q", "-D", ROOT.toString(), "--volatile=overlay",
          "--register=no", "--keep-unit", "--bind-ro=" + jdk,
          "--bind-ro=" + UNIT + ":/etc/systemd/system/shmguard.service",
          "--bind-ro=" + check + ":/etc/systemd/system/shmguard-boot-check.service",
          "--bind=" + results + ":/results", "--bind-ro=" + reloadCheck + ":/reload-check.sh", "--bind=" + etc + ":/etc/shmguard"));
      if (Files.isDirectory(Path.of("/etc/java-17-openjdk"))) {
        cmd.add("--bind-ro=/etc/java-17-openjdk"); // Debian's JDK links its security files from here
      }
      cmd.addAll(daemonBinds(work));
      cmd.addAll(List.of("-b", "--", "systemd.wants=shmguard-boot-check.service"));
      Process boot = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(work.resolve("boot.log").toFile()).start();
      if (!boot.waitFor(5, TimeUnit.MINUTES)) {
        boot.destroy();
        boot.waitFor(60, TimeUnit.SECONDS);
        throw new AssertionError("the container did not power off within 5 minutes:\n" + tail(work.resolve("boot.log")));
      }

      assertThat(read(results.resolve("active"))).as(tail(work.resolve("boot.log"))).isEqualTo("active");
      assertThat(read(results.resolve("show"))).startsWith("StatusText=1 mount, ").contains("fullest /dev/shm at");
      // RuntimeDirectoryMode=0755 and the socket's own 0666, under the unit's UMask=0077.
      assertThat(read(results.resolve("modes")).lines()).containsExactly("755 root directory", "666 root socket");
      // Root of the host (a unit beside shmguard's, in the same namespaces) is served SCAN, a root-only
      // verb, by the daemon under the unit's seccomp filter and capabilities (the pidfd and /proc checks pass).
      assertThat(read(results.resolve("scan"))).startsWith("From the shmguard daemon's last pass, at ");
      List<JsonNode> journal = json(results.resolve("journal.json"));
      JsonNode starting = journal.stream().filter(e -> e.path("MESSAGE").asText().startsWith("shmguard starting"))
          .findFirst().orElseThrow(() -> new AssertionError("no start-up line in " + journal));
      assertThat(starting.get("PRIORITY").asText()).isEqualTo("6"); // from the <6> prefix on the stream
      assertThat(starting.get("MESSAGE").asText()).as("one short line").contains("; alerts to journald").hasSizeLessThan(200);
      List<String> socketLines = journal.stream().map(e -> e.path("MESSAGE").asText())
          .filter(m -> m.startsWith("advice socket listening on")).toList();
      assertThat(socketLines).hasSize(1);
      assertThat(socketLines.get(0)).hasSizeLessThan(120);
      List<JsonNode> events = json(results.resolve("events.json"));
      assertThat(events).isNotEmpty();
      assertThat(events.get(0).get("SHM_MOUNT").asText()).isEqualTo("/dev/shm");
      assertThat(events.get(0).get("MESSAGE_ID").asText()).isEqualTo("236d351982404e6d9b4892d8de5a4858");
      assertThat(read(results.resolve("stopped"))).contains("Result=success").contains("ExecMainStatus=0");

      // systemd 252 (Debian 12): no Type=notify-reload, so ExecReload= (shmguard reload) carries the verdict.
      assertThat(read(results.resolve("reload-bad"))).as(read(results.resolve("status-bad"))).endsWith("exit 1")
          .contains("Job for shmguard.service failed");
      assertThat(read(results.resolve("status-bad"))).contains("active (running)");
      assertThat(read(results.resolve("reload-good"))).isEqualTo("exit 0");
      List<String> messages = journal.stream().map(e -> e.path("MESSAGE").asText()).toList();
      List<String> rejectedLines = messages.stream().filter(m -> m.contains("configuration reload rejected")).toList();
      assertThat(rejectedLines).as("said once").hasSize(1);
      assertThat(rejectedLines.get(0)).contains("/etc/shmguard/shmguard.yaml.d/30-bad.yaml:3: reap.dryRun");
      List<String> reloadLines = messages.stream().filter(m -> m.startsWith("shmguard reload: rejected")).toList();
      assertThat(reloadLines).as("the failed ExecReload's own line, which does not repeat the reason").containsExactly(
          "shmguard reload: rejected; the daemon runs on with the configuration before it (config_rejected gives the file, line and key)");
      long reloaded = messages.stream().filter(m -> m.startsWith("configuration reloaded from /etc/shmguard/shmguard.yaml")).count();
      assertThat(reloaded).as("said once").isEqualTo(1);
    } finally {
      deleteTree(work);
    }
  }

  /**
   * The code under test (the classes this build just compiled, never a jar that may be stale),
   * run by the unit through a drop-in that overrides only ExecStart.
   */
  private static List<String> daemonBinds(Path work) throws IOException {
    List<String> binds = new ArrayList<>();
    String cp = System.getProperty("java.class.path");
    for (String entry : cp.split(File.pathSeparator)) {
      binds.add("--bind-ro=" + Path.of(entry).toAbsolutePath());
    }
    Path dropIn = Files.createDirectories(work.resolve("shmguard.service.d"));
    Files.writeString(dropIn.resolve("classpath.conf"), "[Service]\nExecStart=\nExecStart=/usr/bin/java "
        + "-XX:+UseSerialGC -Xms16m -Xmx96m -XX:TieredStopAtLevel=1 -Xss512k -cp " + cp + " org.shmguard.cli.Main daemon\n"
        + "ExecReload=\nExecReload=/usr/bin/java -XX:+UseSerialGC -Xmx32m -XX:TieredStopAtLevel=1 -cp " + cp + " org.shmguard.cli.Main reload\n");
    binds.add("--bind-ro=" + dropIn + ":/etc/systemd/system/shmguard.service.d");
    return binds;
  }

  /** Makes the Debian root once (about a minute with a network); later runs reuse it. */
  private static synchronized void prepareRoot(Path java) throws Exception {
    if (!Files.isExecutable(ROOT.resolve("lib/systemd/systemd"))) {
      assumeTrue(Files.isExecutable(Path.of("/usr/sbin/debootstrap")), "needs debootstrap to build " + ROOT);
      Path tmp = ROOT.resolveSibling(ROOT.getFileName() + ".tmp");
      deleteTree(tmp);
      Files.createDirectories(tmp.getParent());
      Cmd.Result r = Cmd.exec("debootstrap", "--variant=minbase", "--include=systemd,systemd-sysv,dbus", "bookworm",
          tmp.toString(), "http://deb.debian.org/debian");
      assumeTrue(r.status() == 0, "debootstrap failed (no network?): " + r.err().lines().reduce((a, b) -> b).orElse(""));
      Files.move(tmp, ROOT);
    }
    Path link = ROOT.resolve("usr/bin/java");
    Files.deleteIfExists(link);
    Files.createSymbolicLink(link, java); // the host's JDK, bound at the same path
  }

  private static String read(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p).strip() : "(" + p.getFileName() + " not written)";
  }

  private static List<JsonNode> json(Path p) throws IOException {
    ObjectMapper mapper = new ObjectMapper();
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(p)) {
      if (!line.isBlank()) {
        out.add(mapper.readTree(line));
      }
    }
    return out;
  }

  private static String tail(Path log) throws IOException {
    return LogTail.last(Files.exists(log) ? Files.readAllLines(log) : List.of(), 40);
  }

  private static void deleteTree(Path p) throws IOException {
    if (Files.exists(p)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
  }
}
