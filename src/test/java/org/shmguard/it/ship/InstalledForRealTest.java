package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Sandbox;

/**
 * The .deb installed for real: a clean Debian 12 root (debootstrap, cached under
 * /var/cache/shmguard-test) booted with systemd-nspawn, the package installed there with apt,
 * observe-only from a drop-in placed before an unattended install, shmguard run inside, a leaked
 * segment reported, then reaped after {@code systemctl reload} turned reaping on, a bad drop-in
 * rejected by a reload, the package removed and purged. The work is in
 * src/test/install/installed-for-real.sh; this test runs it and reads its verdicts.
 */
class InstalledForRealTest {
  private static final Path SCRIPT = Path.of("src/test/install/installed-for-real.sh");

  @Test
  void debInstallsBootsReapsAndRemovesCleanlyInADebianRoot() throws Exception {
    Sandbox.require();
    for (String tool : new String[] {"/usr/sbin/debootstrap", "/usr/bin/systemd-nspawn", "/usr/bin/nsenter"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (Debian: debootstrap, systemd-container; .ci/run installs them)");
    }
    Path deb = Packages.deb();

    Process p = new ProcessBuilder(SCRIPT.toString(), deb.toString()).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.MINUTES)).as("finished").isTrue();

    String verdicts = String.join("\n", out.lines().filter(l -> l.matches("(CHECK|SKIP|FAIL) .*")).toList());
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(verdicts)
        .contains("CHECK booted with systemd-nspawn")
        .contains("CHECK installed with apt-get install -y, a drop-in placed first, no conffile question: ok")
        .contains("CHECK shmguard scan works inside: ok")
        .containsPattern("CHECK leaked segment reaped by (the service|shmguard clean inside): ok")
        .contains("CHECK removed cleanly, configuration kept: ok")
        .contains("CHECK purged: ok")
        .doesNotContain("FAIL");
    if (Files.exists(Path.of("systemd/shmguard.service"))) {
      assertThat(verdicts)
          .contains("CHECK the package enabled and started the service (READY reached): ok")
          .contains("CHECK service active: ok")
          .contains("CHECK leaked segment reaped by the service: ok")
          .contains("CHECK reap in the service's journal: ok")
          .contains("CHECK the service started observe-only, from the drop-in: ok")
          .contains("CHECK holder history kept in the StateDirectory (root's, 0600) and read back after the restart: ok")
          .contains("CHECK observe-only: the leak reported (segment_leaked), not reaped: ok")
          .contains("CHECK systemctl reload turned reaping on in the same process (config_reloaded): ok")
          .contains("CHECK systemctl reload with a bad drop-in: exits non-zero, config_rejected (file, line), still active, status says so: ok")
          .contains("CHECK the daemon's advice file gone with the package: ok");
    }
  }
}
