package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;

/**
 * The shipped drop-in that lets a central Prometheus scrape: systemd reads it beside the unit
 * (as from /etc/systemd/system/shmguard.service.d/), accepts it, and it only adds to the unit's
 * address allow list, which keeps IPAddressDeny=any and localhost.
 */
class RemoteMetricsDropInTest {
  private static final Path UNIT = Path.of("systemd/shmguard.service");
  private static final Path DROP_IN = Path.of("packaging/systemd/remote-metrics.conf");

  @Test
  void systemdAcceptsTheUnitWithTheDropIn(@TempDir Path dir) throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "needs systemd-analyze (Debian package systemd)");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/java")), "the unit's ExecStart is /usr/bin/java");
    Path unit = Files.copy(UNIT, dir.resolve("shmguard.service"));
    Path d = Files.createDirectories(dir.resolve("shmguard.service.d"));
    Files.copy(DROP_IN, d.resolve("remote-metrics.conf"));

    Cmd.Result ok = Cmd.exec("systemd-analyze", "verify", unit.toString());

    assertThat(ok.status()).as(ok.err() + ok.out()).isZero();
    assertThat(ok.err() + ok.out()).doesNotContain("remote-metrics.conf:").doesNotContain("shmguard.service:");
    // The same check does read the drop-in: a bad address in it is reported with its file and line.
    Files.writeString(d.resolve("remote-metrics.conf"), Files.readString(DROP_IN).replace("IPAddressAllow=10.0.0.0/8",
        "IPAddressAllow=10.0.0.0/33"));
    Cmd.Result bad = Cmd.exec("systemd-analyze", "verify", unit.toString());
    assertThat(bad.err() + bad.out()).contains("remote-metrics.conf:");
  }

  @Test
  void theDropInOnlyAddsAddressesAndTheUnitKeepsItsDenyAll() throws Exception {
    String dropIn = Files.readString(DROP_IN);
    assertThat(dropIn.lines().filter(l -> !l.startsWith("#") && !l.isBlank()))
        .allMatch(l -> l.equals("[Service]") || l.matches("IPAddressAllow=\\S.*"));
    assertThat(Files.readString(UNIT).lines()).contains("IPAddressDeny=any", "IPAddressAllow=localhost");
  }
}
