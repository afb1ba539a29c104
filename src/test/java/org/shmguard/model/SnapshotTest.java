package org.shmguard.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a snapshot answers besides its lists: which watched tmpfs a mount namespace shows at /dev/shm. */
class SnapshotTest {
  private static final ShmMount HOST = new ShmMount(Dev.of(0, 25), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw",
      "mnt:[4026531841]", List.of(), null, null, 31, "/proc/self/mountinfo", null, 0L);
  private static final ShmMount CONTAINER = new ShmMount(Dev.of(0, 48), "/proc/700/root/dev/shm", "/dev/shm",
      MountOrigin.NAMESPACE, "rw,size=65536k", "mnt:[4026532100]", List.of(700), "podman:223f1be9978c", null, 88,
      "/proc/700/mountinfo", null, 0L);
  private static final ShmMount POD_VOLUME = new ShmMount(Dev.of(0, 60), "/var/lib/kubelet/pods/u/volumes/dshm",
      "/var/lib/kubelet/pods/u/volumes/dshm", MountOrigin.CONFIGURED, "rw", "mnt:[4026531841]", List.of(), null, null, 90,
      "/proc/self/mountinfo", null, 0L);

  private static Snapshot of(List<ShmMount> mounts) {
    return new Snapshot(Instant.EPOCH, mounts, List.of(), HolderIndex.empty(), new BitSet(), Map.of(), List.of(), List.of(),
        true, 0);
  }

  @Test
  void eachNamespaceShowsTheTmpfsItWasFoundThroughAtDevShm() {
    Snapshot s = of(List.of(HOST, CONTAINER, POD_VOLUME));

    assertThat(s.shmOf(4026531841L)).as("shmguard's own namespace: the host's, not the pod volume it also shows")
        .isEqualTo(HOST);
    assertThat(s.shmOf(4026532100L)).isEqualTo(CONTAINER);
    assertThat(s.shmOf(4026532999L)).as("a namespace no pass read").isNull();
  }

  @Test
  void discoverysRecordOfEveryNamespaceIsKeptAndNamesOnlyWatchedMounts() {
    Snapshot s = of(List.of(HOST, CONTAINER));
    Snapshot joined = new Snapshot(s.takenAt(), s.mounts(), s.segments(), s.holders(), s.livePids(), s.processes(),
        s.problems(), s.warnings(), s.hostPidNamespace(), s.processesScanned(), s.contents(), s.creators(), s.coverage(),
        s.torchManagers(), Map.of(4026532100L, CONTAINER.dev(), 4026532101L, CONTAINER.dev(), 4026532102L, Dev.of(0, 99)));

    assertThat(joined.shmOf(4026532101L)).as("a second container of the pod, which joined the first's tmpfs")
        .isEqualTo(CONTAINER);
    assertThat(joined.shmOf(4026532102L)).as("a device that is not among the watched mounts").isNull();
    assertThat(joined.withCreators(CreatorCandidates.none()).shmOf(4026532101L)).isEqualTo(CONTAINER);
  }
}
