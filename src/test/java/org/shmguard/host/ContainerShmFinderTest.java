package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A starting container's /dev/shm as {@link ContainerShmFinder} finds it through its pid, on real
 * processes: a container's own tmpfs, a process in shmguard's own mount namespace, a process that
 * has exited; and its memory limit from fixture cgroup trees: cgroup v2 ({@code memory.max}, its
 * own or a parent's, whichever is lower), v1 ({@code memory.limit_in_bytes}), and none.
 */
class ContainerShmFinderTest {
  @TempDir Path root;

  @Test
  void aContainersOwnTmpfsIsFoundThroughItsPid() throws IOException {
    try (org.shmguard.testing.Holder c = org.shmguard.testing.Holder.startInContainer("size=3m");
        ContainerShmFinder.Found f = new ContainerShmFinder(HostPaths.system(), false)
            .find(new org.shmguard.model.ContainerStart("abc123", c.pid(), 1, null))) {
      assertThat(f.none()).isNull();
      assertThat(f.mount().path()).isEqualTo("/proc/" + c.pid() + "/root/dev/shm");
      assertThat(f.mount().pids()).containsExactly(c.pid());
      assertThat(f.mount().mayAct()).isTrue();
      assertThat(f.mount().options()).contains("size=3072k");
      assertThat(f.stillRunning()).isTrue();
    }
  }

  @Test
  void aProcessOfShmguardsOwnNamespaceHasNoTmpfsOfItsOwnAndOneThatExitedIsAnError() throws Exception {
    Process own = new ProcessBuilder("sleep", "600").start();
    try (ContainerShmFinder.Found f = new ContainerShmFinder(HostPaths.system(), false)
        .find(new org.shmguard.model.ContainerStart("abc123", (int) own.pid(), 1, null))) {
      assertThat(f.mount()).isNull();
      assertThat(f.none()).isEqualTo("its process shares shmguard's mount namespace, so its /dev/shm is the host's");
    } finally {
      own.destroyForcibly().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
    }
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ContainerShmFinder(HostPaths.system(), false)
        .find(new org.shmguard.model.ContainerStart("abc123", (int) own.pid(), 1, null)))
        .isInstanceOf(IOException.class).hasMessageContaining("pid " + own.pid());
  }

  private Long limit(String cgroupFile) {
    return new ContainerShmFinder(HostPaths.of(root.toString()), false).memoryLimit(cgroupFile);
  }

  private void write(String path, String value) throws IOException {
    Path p = root.resolve(path);
    Files.createDirectories(p.getParent());
    Files.writeString(p, value + "\n");
  }

  @Test
  void cgroupV2TakesTheLowestMemoryMaxOfTheContainersCgroupAndItsParents() throws IOException {
    write("sys/fs/cgroup/machine.slice/memory.max", "1073741824");
    write("sys/fs/cgroup/machine.slice/libpod-abc.scope/memory.max", "max");
    assertThat(limit("0::/machine.slice/libpod-abc.scope\n")).isEqualTo(1L << 30);
    write("sys/fs/cgroup/machine.slice/libpod-abc.scope/memory.max", "536870912");
    assertThat(limit("0::/machine.slice/libpod-abc.scope\n")).isEqualTo(1L << 29);
  }

  @Test
  void cgroupV1ReadsLimitInBytesAndTheKernelsNoLimitIsNone() throws IOException {
    String file = "12:pids:/libpod_parent/libpod-abc\n4:memory:/libpod_parent/libpod-abc\n0::/libpod_parent/libpod-abc\n";
    write("sys/fs/cgroup/memory/libpod_parent/libpod-abc/memory.limit_in_bytes", "9223372036854771712");
    assertThat(limit(file)).isNull();
    write("sys/fs/cgroup/memory/libpod_parent/libpod-abc/memory.limit_in_bytes", "536870912");
    assertThat(limit(file)).isEqualTo(1L << 29);
  }

  @Test
  void noControllerNoLimit() {
    assertThat(limit("0::/user.slice\n")).isNull();
    assertThat(limit("")).isNull();
  }
}
