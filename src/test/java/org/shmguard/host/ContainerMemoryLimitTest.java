package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A container's memory limit as {@link ContainerShmFinder} reads it, from fixture cgroup trees:
 * cgroup v2 ({@code memory.max}, its own or a parent's, whichever is lower), v1
 * ({@code memory.limit_in_bytes}), and none.
 */
class ContainerMemoryLimitTest {
  @TempDir Path root;

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
