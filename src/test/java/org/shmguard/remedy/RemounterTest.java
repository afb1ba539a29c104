package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.host.HostPaths;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.testing.TestConfig;

/** What the remounter decides before it touches a mount: report-only mounts and the host's memory. */
class RemounterTest {
  @Test
  void aMountShmguardOnlyReportsIsRefusedWithoutBeingOpened() throws Exception {
    Remounter r = Remounter.create(TestConfig.parse("remount:\n  enabled: true\n").remount(),
        HostPaths.system(), Clock.systemUTC());
    ShmMount reportOnly = new ShmMount(Dev.of(0, 4242), "/proc/4242/root/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null,
        List.of(), null, null, 0, null, "a user's own namespace", 65534L);

    RemountOutcome o = r.grow(reportOnly, null, "asked by root over the advice socket");

    assertThat(o.result()).isEqualTo(RemountOutcome.Result.REFUSED);
    assertThat(o.detail()).isEqualTo("shmguard only reports this mount: a user's own namespace");
    assertThat(o.grown()).isFalse();
    assertThat(o.failed()).isFalse();
  }

  @Test
  void theHostsMemoryIsReadFromMeminfoInBytes(@TempDir Path root) throws Exception {
    Files.createDirectories(root.resolve("proc"));
    Files.writeString(root.resolve("proc/meminfo"), "MemTotal:       32768000 kB\nMemFree:        1000 kB\n");

    assertThat(Remounter.memTotal(HostPaths.of(root.toString()))).isEqualTo(32768000L * 1024);
  }
}
