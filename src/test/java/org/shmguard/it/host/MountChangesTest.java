package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountChanges;
import org.shmguard.host.MountDiscovery;
import org.shmguard.model.Dev;
import org.shmguard.testing.Sandbox;

/**
 * The daemon's rediscovery runs the full discovery only when what discovery reads changed, and
 * still finds a container's /dev/shm the first call after it appears: in a new namespace, in a
 * namespace already seen, and when a process already seen moves to another namespace under the
 * same pid.
 */
class MountChangesTest {

  @Test
  void aQuietHostIsNotDiscoveredAgain() {
    Sandbox.require();
    MountChanges changes = new MountChanges(HostPaths.system(), new MountDiscovery(HostPaths.system()), true, List.of());
    Set<Dev> first = changes.devices();

    Set<Dev> again = changes.devices();
    Set<Dev> third = changes.devices();

    assertThat(first).isNotEmpty();
    assertThat(again).isEqualTo(first);
    assertThat(third).isEqualTo(first);
    assertThat(changes.fullDiscoveries()).isEqualTo(1);
  }

  @Test
  void aTmpfsMountedAtDevShmInANamespaceAlreadySeenIsFoundAtTheNextCall() throws Exception {
    Sandbox.require();
    MountChanges changes = new MountChanges(HostPaths.system(), new MountDiscovery(HostPaths.system()), true, List.of());
    // A runtime makes the namespace first and mounts its /dev/shm afterwards.
    try (Scripted ctr = Scripted.start("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
        "echo ready; read x; mount -t tmpfs -o size=1m late-shm /dev/shm && echo mounted; read y")) {
      Set<Dev> before = changes.devices();

      ctr.step("mounted");
      Set<Dev> after = changes.devices();

      assertThat(after).containsAll(before).contains(ctr.shmDev()).hasSize(before.size() + 1);
    }
  }

  @Test
  void aProcessThatMovesToANewNamespaceUnderTheSamePidIsFollowed() throws Exception {
    Sandbox.require();
    MountChanges changes = new MountChanges(HostPaths.system(), new MountDiscovery(HostPaths.system()), true, List.of());
    // exec keeps the pid: the same process, first in the sandbox's namespace, then in one of its own.
    try (Scripted moving = Scripted.start("/bin/sh", "-c", "echo ready; read x; exec unshare --mount --propagation private"
        + " /bin/sh -c 'mount -t tmpfs -o size=1m moved-shm /dev/shm && echo mounted; read y'")) {
      Set<Dev> before = changes.devices();

      moving.step("mounted");
      Set<Dev> after = changes.devices();

      assertThat(after).contains(moving.shmDev()).hasSize(before.size() + 1);
    }
  }

  /** A shell told to go on one step at a time through its standard input; ended by pid. */
  private static final class Scripted implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final OutputStream in;

    private Scripted(Process process) {
      this.process = process;
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = process.getOutputStream();
    }

    static Scripted start(String... cmd) throws IOException {
      Scripted s = new Scripted(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
      s.expect("ready");
      return s;
    }

    void step(String expected) throws IOException {
      in.write('\n');
      in.flush();
      expect(expected);
    }

    private void expect(String line) throws IOException {
      String got = out.readLine();
      if (!line.equals(got)) {
        throw new AssertionError("the script said " + got + ", not " + line);
      }
    }

    /** The device of the tmpfs the script's process sees at /dev/shm. */
    Dev shmDev() throws IOException {
      Object dev = Files.getAttribute(Path.of("/proc", Long.toString(process.pid()), "root", "dev", "shm"), "unix:dev");
      long d = (Long) dev;
      return Dev.of((int) ((d >>> 8) & 0xfff), (int) ((d & 0xff) | ((d >>> 12) & 0xfff00)));
    }

    @Override
    public void close() throws Exception {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
