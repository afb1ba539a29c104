package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Nothing is reaped on evidence that may be partial. */
class EvidenceGateTest {

  @Test
  void passThatCannotReadEveryProcessReapsNothing() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path leaked = shm.createSegment("nccl-NoPriv", 4_100);
      Files.setPosixFilePermissions(leaked, PosixFilePermissions.fromString("rw-rw-rw-"));
      Path config = TestConfig.watching(shm.path(), "0s");
      Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
      Files.setPosixFilePermissions(config.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
      try (Holder rootProcess = Holder.start("fd", shm.createSegment("nccl-RootFd", 4_100).toString())) {
        // An unprivileged shmguard cannot read root's processes: the pass is incomplete.
        Cmd.Result r = Cmd.exec("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            Sandbox.javaBinary(), "-cp", readableClassPath(), "org.shmguard.cli.Main",
            "clean", "-c", config.toString());

        assertThat(r.status()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.out()).contains("not reaping: could not read").contains("run shmguard as root");
        assertThat(leaked).exists();
      }
    }
  }

  /** The test class path copied where an unprivileged user can read it (/root is private). */
  private static String readableClassPath() throws java.io.IOException {
    Path dir = Files.createDirectories(Sandbox.MOUNTS.resolve("cp-" + ProcessHandle.current().pid()));
    StringBuilder cp = new StringBuilder();
    int i = 0;
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path from = Path.of(entry);
      if (!Files.exists(from)) {
        continue;
      }
      Path to = dir.resolve((i++) + "-" + from.getFileName());
      if (!Files.exists(to)) {
        Cmd.run("cp", "-r", from.toString(), to.toString());
      }
      cp.append(cp.length() == 0 ? "" : java.io.File.pathSeparator).append(to);
    }
    Cmd.run("chmod", "-R", "a+rX", dir.toString());
    Files.setPosixFilePermissions(Sandbox.MOUNTS, PosixFilePermissions.fromString("rwxr-xr-x"));
    return cp.toString();
  }

  @Test
  void outsideTheHostPidNamespaceNothingIsReapedByDefault() {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path leaked = shm.createSegment("nccl-ForPid", 4_100);
      // The sandbox is a PID namespace of its own, so the default (true) must hold reaping back.
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 0s\n");

      CliRun scan = CliRun.of("scan", "-c", config.toString());
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(scan.out()).contains("leaked");
      assertThat(clean.status()).isEqualTo(1);
      assertThat(clean.out()).contains("not in the host's PID namespace");
      assertThat(leaked).exists();
    }
  }

  @Test
  void dryRunReportsWhatWouldBeReapedAndUnlinksNothing() {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path leaked = shm.createSegment("nccl-DryRun", 9_637_892);

      CliRun run = CliRun.of("clean", "--dry-run", "-c", TestConfig.watching(shm.path(), "0s").toString());

      assertThat(run.status()).isZero();
      assertThat(run.out()).contains("would-reap").contains("nccl-DryRun").contains("nccl-shm-recv").contains("Would free 9.2M");
      assertThat(leaked).exists();
    }
  }
}
