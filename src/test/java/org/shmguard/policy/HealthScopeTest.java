package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;

/** Whose health a mount counts for, and how an event about an owner's mount is marked. */
class HealthScopeTest {
  private static ShmMount mount(String reportOnly, Long ownerUid) {
    return new ShmMount(Dev.of(0, 77), "/proc/109/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE, "rw", "mnt:[2]",
        List.of(109), null, null, 31, "/proc/109/mountinfo", reportOnly, ownerUid);
  }

  @Test
  void aMountShmguardMayActOnIsTheNodesAndAReportOnlyOneIsItsOwners() {
    assertThat(HealthScope.of(mount(null, 0L))).isEqualTo(HealthScope.NODE);
    assertThat(HealthScope.of(mount("a user's namespace", 65534L))).isEqualTo(HealthScope.OWNER);
    assertThat(HealthScope.of(null)).isEqualTo(HealthScope.NODE);
    assertThat(HealthScope.whose(mount("a user's namespace", 65534L))).isEqualTo("uid 65534's");
    assertThat(HealthScope.whose(mount("cannot tell", null))).isEqualTo("an unknown user's");
    assertThat(HealthScope.ownerUid(mount(null, 1000L))).as("the node's carries no owner label").isEmpty();
  }

  @Test
  void aCriticalEventAboutAnOwnersMountIsANoticeWithTheOwnersUid() {
    Alert critical = Alert.of(EventKind.CAPACITY_CRITICAL, "full").with("SHM_MOUNT", "/proc/109/root/dev/shm");

    Alert theirs = HealthScope.tag(critical, mount("a user's namespace", 65534L));
    Alert nodes = HealthScope.tag(critical, mount(null, 0L));

    assertThat(theirs.priority()).isEqualTo(5);
    assertThat(theirs.field("SHM_SCOPE")).isEqualTo("owner");
    assertThat(theirs.field("SHM_OWNER_UID")).isEqualTo("65534");
    assertThat(theirs.journalFields()).contains(java.util.Map.entry("PRIORITY", "5"));
    assertThat(nodes).isSameAs(critical);
    assertThat(nodes.priority()).isEqualTo(2);
    assertThat(HealthScope.tag(Alert.of(EventKind.MOUNT_ADDED, "watching"), mount("x", 1L)).priority())
        .as("an info stays info").isEqualTo(6);
  }
}
