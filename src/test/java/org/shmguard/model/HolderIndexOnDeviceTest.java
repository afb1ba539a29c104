package org.shmguard.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Whether anything is held on a tmpfs at all, the first evidence that every writer of a volume
 * has exited: a mapping of an unlinked file counts, another device's files do not, and an O_PATH
 * fd whose device is unknown may be on it; an open file description of an unknown device (a hint)
 * is the lease's to see, not a holder.
 */
class HolderIndexOnDeviceTest {
  private static final Dev VOLUME = Dev.of(0, 42);
  private static final Dev OTHER = Dev.of(0, 43);

  @Test
  void anUnlinkedFilesMappingHoldsTheVolume() {
    HolderIndex idx = HolderIndex.builder()
        .add(new FileKey(VOLUME, 7), new HolderRef(300, Access.MAP, "/dev/shm/nccl-AbC123 (deleted)", true, 4096)).build();
    assertThat(idx.heldOnDevice(VOLUME)).isTrue();
  }

  @Test
  void anotherDevicesFilesDoNot() {
    HolderIndex idx = HolderIndex.builder()
        .add(new FileKey(OTHER, 7), new HolderRef(300, Access.FD, "/dev/shm/x", false, 4096)).build();
    assertThat(idx.heldOnDevice(VOLUME)).isFalse();
    assertThat(HolderIndex.empty().heldOnDevice(VOLUME)).isFalse();
  }

  @Test
  void anOpathFdOfAnUnknownDeviceMayBeOnIt() {
    HolderIndex idx = HolderIndex.builder()
        .addUnresolved(7, new HolderRef(300, Access.FD_UNRESOLVED, "/x", false, 0)).build();
    assertThat(idx.heldOnDevice(VOLUME)).isTrue();
  }

  @Test
  void anOpenFileDescriptionOfAnUnknownDeviceIsOnlyAHint() {
    HolderIndex idx = HolderIndex.builder()
        .addHint(7, new HolderRef(300, Access.FD_UNRESOLVED, "/x", false, 0)).build();
    assertThat(idx.heldOnDevice(VOLUME)).isFalse();
  }
}
