package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * The NHC check file (packaging/slurm/shmguard.nhc) run the way NHC runs it: sourced by a driver
 * that provides NHC's die and log (src/test/resources/slurm/nhc-driver, a stand-in for LBNL NHC,
 * which Debian does not package), with a stand-in `shmguard` on PATH for each answer `shmguard
 * check` can give. SlurmTest runs it against the real `shmguard check` and a real Slurm.
 */
class NhcCheckTest {
  private static final Path CHECK = Path.of("packaging/slurm/shmguard.nhc").toAbsolutePath();
  private static final Path DRIVER = Path.of("src/test/resources/slurm/nhc-driver").toAbsolutePath();

  @TempDir Path dir;

  @Test
  void aHealthyVerdictPasses() throws IOException {
    fakeShmguard("echo 'ok: 1 mount, fullest /dev/shm 3% (critical 95%), 0 leaked'; exit 0");

    Cmd.Result r = nhc("check_shmguard");

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aProblemFailsTheNodeWithShmguardsLineAsTheReasonWithoutWhatEvalWouldRun() throws IOException {
    fakeShmguard("echo \"/dev/shm 97% full (critical 95%); 2 leaked segments (4.0K) shmguard may not reap: "
        + "'\\$(touch " + dir.resolve("pwned") + ")' \\`id\\`\"; exit 1");

    Cmd.Result r = nhc("check_shmguard");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).startsWith("ERROR:  nhc:  Health check failed:  check_shmguard:  /dev/shm 97% full (critical 95%); "
        + "2 leaked segments (4.0K) shmguard may not reap: (touch ");
    assertThat(r.out()).doesNotContain("'", "`", "$");
    assertThat(dir.resolve("pwned")).doesNotExist();
  }

  @Test
  void aVerdictShmguardCannotReachIsLoggedAndPassesUnlessAskedToFail() throws IOException {
    fakeShmguard("echo 'unknown: bad configuration: reap.grace: not a duration'; exit 2");

    Cmd.Result passes = nhc("check_shmguard");
    Cmd.Result fails = nhc("check_shmguard -u");

    assertThat(passes.status()).isZero();
    assertThat(passes.err()).contains("check_shmguard:  shmguard check cannot judge:  unknown: bad configuration: reap.grace",
        "-u would fail the node");
    assertThat(fails.status()).isEqualTo(1);
    assertThat(fails.out()).contains("Health check failed:  check_shmguard:  shmguard check cannot judge:  unknown: bad configuration");
  }

  @Test
  void aCheckThatHangsIsEndedAtItsTimeout() throws IOException {
    fakeShmguard("exec sleep 60");

    long start = System.nanoTime();
    Cmd.Result r = nhc("check_shmguard -t 1 -u");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).contains("check_shmguard:  shmguard check gave no answer within 1s");
    assertThat((System.nanoTime() - start) / 1_000_000_000).isLessThan(30);
  }

  @Test
  void aNodeWithoutShmguardPassesAndSaysWhy() throws IOException {
    Path empty = Files.createDirectory(dir.resolve("empty"));

    Cmd.Result r = run(empty, "check_shmguard", "30");

    assertThat(r.status()).isZero();
    assertThat(r.err()).contains("check_shmguard:  shmguard is not installed on this node; nothing to check.");
  }

  @Test
  void theConfigurationIsPassedOnAndBadOptionsFailLikeNhcsOwnChecks() throws IOException {
    Path args = dir.resolve("args");
    fakeShmguard("echo \"$@\" > " + args + "; echo ok; exit 0");

    assertThat(nhc("check_shmguard -c /etc/shmguard/gpu.yaml").status()).isZero();
    assertThat(Files.readString(args)).isEqualTo("check --config /etc/shmguard/gpu.yaml\n");
    assertThat(run(dir, "check_shmguard -t 60", "30").out()).contains("Check timeout 60 exceeds NHC timeout 30");
    assertThat(nhc("check_shmguard -t soon").out()).contains("-t takes a whole number of seconds");
    assertThat(nhc("check_shmguard -x").out()).contains("Invalid option:  -x");
  }

  @Test
  void theCheckFilePassesShellcheckAsBash() {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/shellcheck")), "needs shellcheck");
    Cmd.Result r = Cmd.exec("shellcheck", "-s", "bash", CHECK.toString());
    assertThat(r.status()).as(r.out()).isZero();
  }

  /** Puts a `shmguard` on PATH that runs this build's command line, as /usr/bin/shmguard does the packaged jar. */
  static Path shmguardOnPath(Path bin) throws IOException {
    Sandbox.require();
    return SlurmTest.executable(bin.resolve("shmguard"), "#!/bin/sh\nexec " + Sandbox.javaBinary()
        + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -cp '" + System.getProperty("java.class.path")
        + "' org.shmguard.cli.Main \"$@\"\n");
  }

  private void fakeShmguard(String body) throws IOException {
    SlurmTest.executable(dir.resolve("shmguard"), "#!/bin/sh\n" + body + "\n");
  }

  private Cmd.Result nhc(String check) throws IOException {
    return run(dir, check, "30");
  }

  /** The driver with PATH = {@code bin} and coreutils' timeout, NHC's TIMEOUT, and no Slurm to mark (MARK_OFFLINE=0). */
  private Cmd.Result run(Path bin, String check, String timeout) throws IOException {
    Path scripts = Files.createDirectories(dir.resolve("scripts"));
    Files.copy(CHECK, scripts.resolve("shmguard.nhc"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Path conf = Files.writeString(dir.resolve("nhc.conf"), "* || " + check + "\n");
    Path tools = Files.createDirectories(dir.resolve("tools"));
    for (String tool : List.of("timeout", "sleep")) {
      if (!Files.exists(tools.resolve(tool))) {
        Files.createSymbolicLink(tools.resolve(tool), Path.of("/usr/bin", tool));
      }
    }
    List<String> cmd = new ArrayList<>(List.of("/usr/bin/env", "-i", "PATH=" + bin + ":" + tools, "HOSTNAME=node1",
        "MARK_OFFLINE=0", "TIMEOUT=" + timeout, "NHC_CONF=" + conf, "NHC_SCRIPTS=" + scripts, "/bin/bash", DRIVER.toString()));
    return Cmd.exec(cmd.toArray(String[]::new));
  }
}
