package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;

/** Every remount's outcome becomes its event here, with the sizes and options before and after. */
class OutcomeAlertsTest {
  private record Remount(String mount, boolean grown, boolean failed, long fromBytes, long toBytes, String detail,
      String optionsBefore, String optionsAfter, String summary) implements RemountResult {}

  @Test
  void aGrownMountIsRemountGrownWithItsSizesAndOptions() {
    Alert a = OutcomeAlerts.remounted(new Remount("/dev/shm", true, false, 64L << 20, 1L << 30,
        "grow to 1.0G", "rw size=65536k", "rw size=1048576k", "grew /dev/shm from 64M to 1.0G"));

    assertThat(a.kind()).isEqualTo(EventKind.REMOUNT_GROWN);
    assertThat(a.message()).isEqualTo("grew /dev/shm from 64M to 1.0G");
    assertThat(a.field("SHM_MOUNT")).isEqualTo("/dev/shm");
    assertThat(a.field("SHM_SIZE_BEFORE")).isEqualTo(Long.toString(64L << 20));
    assertThat(a.field("SHM_SIZE_AFTER")).isEqualTo(Long.toString(1L << 30));
    assertThat(a.field("SHM_OPTIONS_AFTER")).isEqualTo("rw size=1048576k");
    assertThat(a.field("SHM_REASON")).isEqualTo("grow to 1.0G");
  }

  @Test
  void aRefusedAndAFailedRemountHaveEventsOfTheirOwn() {
    assertThat(OutcomeAlerts.remounted(new Remount("/dev/shm", false, false, 0, 0, "remounting is off", "", "",
        "did not remount /dev/shm: remounting is off")).kind()).isEqualTo(EventKind.REMOUNT_REFUSED);
    assertThat(OutcomeAlerts.remounted(new Remount("/dev/shm", false, true, 0, 0, "EPERM", "", "",
        "failed to remount /dev/shm: EPERM")).kind()).isEqualTo(EventKind.REMOUNT_FAILED);
  }
}
