package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;

class ShmFixTest {
  private static ShmMount namespaceShm(String reportOnly) {
    return new ShmMount(Dev.of(0, 91), "/proc/4242/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE, "rw,size=65536k",
        "mnt:[4026532500]", List.of(4242), "", null, 1234, "1234 30 0:91 / /dev/shm rw - tmpfs shm rw", reportOnly, null);
  }

  @Test
  void aContainerOfRootsRuntimeIsGivenTheRemountThatReachesItsOwnMount() {
    assertThat(ShmFix.remountLine(namespaceShm(null), 1))
        .isEqualTo("for the running container, until it restarts: nsenter -t 4242 -m mount -o remount,size=1G /dev/shm");
  }

  @Test
  void aNamespaceAnOrdinaryUserMadeGetsNoRemountToPaste() {
    String line = ShmFix.remountLine(namespaceShm("its mount namespace belongs to a user namespace other than the host's"), 1);

    assertThat(line).doesNotContain("nsenter").doesNotContain("mount -o")
        .contains("no remount is suggested").contains("user namespace other than the host's");
  }
}
