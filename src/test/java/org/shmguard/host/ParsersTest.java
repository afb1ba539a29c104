package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.Use;

/** The formats the kernel writes, parsed from lines as the kernel writes them. */
class ParsersTest {

  @Test
  void mapsLinesMatchOnlyWatchedDevicesAndKeepDeletedPaths() {
    String maps = String.join("\n",
        "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567                    /usr/bin/python3.11",
        "7f3a00000000-7f3a00932000 rw-s 00000000 00:1a 4242                       /dev/shm/nccl-AbCdEf (deleted)",
        "7f3b00000000-7f3b00001000 rw-s 00000000 00:10a 99                        /dev/shm/nccl-high",
        "7f3c00000000-7f3c00001000 rw-s 00000000 00:1a 0                          [anon]",
        "7ffd1c9f1000-7ffd1ca12000 rw-p 00000000 00:00 0                          [stack]",
        "7f3d00000000-7f3d00001000 rw-s 00000000 00:1a 5000                       /dev/shm/with space name",
        "7f3e00000000-7f3e00001000 r--s 00000000 00:1a 5001                       /dev/shm/read-only",
        "7f3f00000000-7f3f00001000 rw-p 00000000 00:1a 5002                       /dev/shm/private-copy",
        "");
    long[] wanted = HolderScanner.encode(List.of(Dev.of(0, 26), Dev.of(0, 266)));
    List<String> seen = new ArrayList<>();
    MapsParser.forEachMatch(maps, wanted,
        (dev, ino, len, path, writes) -> seen.add(dev + " " + ino + " " + len + " " + path + (writes ? " writes" : "")));
    assertThat(seen).as("only a shared, writable mapping can change the file").containsExactly(
        "0:26 4242 9641984 /dev/shm/nccl-AbCdEf (deleted) writes",
        "0:266 99 4096 /dev/shm/nccl-high writes",
        "0:26 5000 4096 /dev/shm/with space name writes",
        "0:26 5001 4096 /dev/shm/read-only",
        "0:26 5002 4096 /dev/shm/private-copy");
  }

  @Test
  void mountinfoLinesWithOptionalFieldsAndEscapes() {
    String text = String.join("\n",
        "24 29 0:22 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=65536k,inode64",
        "612 600 0:266 / /var/lib/docker/containers/abc/mounts/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k",
        "700 24 0:55 /sub /mnt/with\\040space rw master:1 propagate_from:2 - tmpfs tmpfs rw",
        "garbage line");
    List<MountEntry> entries = MountEntry.parseAll(text);
    assertThat(entries).hasSize(3);
    assertThat(entries.get(0).mountPoint()).isEqualTo("/dev/shm");
    assertThat(entries.get(0).superOptions()).isEqualTo("rw,size=65536k,inode64");
    assertThat(entries.get(1).dev()).isEqualTo(Dev.of(0, 266));
    assertThat(entries.get(1).source()).isEqualTo("shm");
    assertThat(entries.get(2).mountPoint()).isEqualTo("/mnt/with space");
    assertThat(entries.get(2).root()).isEqualTo("/sub");
    assertThat(MountDiscovery.visibleAt(entries, "/dev/shm")).isSameAs(entries.get(0));
  }

  @Test
  void cgroupPathsNameTheirContainerPodOrJob() {
    assertThat(ContainerLabel.fromCgroupFile("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718.slice/cri-containerd-" + "a".repeat(64) + ".scope\n"))
        .isEqualTo("pod:1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
    assertThat(ContainerLabel.fromCgroupFile("0::/system.slice/docker-" + "0123456789ab".repeat(5) + "0123.scope\n"))
        .isEqualTo("docker:0123456789ab");
    assertThat(ContainerLabel.fromCgroupFile("12:memory:/slurm/uid_1000/job_4242/step_0\n0::/\n")).isEqualTo("slurm-job:4242");
    assertThat(ContainerLabel.fromCgroupFile("0::/user.slice/user-1000.slice/session-3.scope\n")).isNull();
  }

  @Test
  void procStatusAndStatFields() {
    assertThat(ProcessDetails.parseUid("Name:\tpython3\nUmask:\t0022\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\n")).isEqualTo(1000);
    String stat = "4242 (python3 (worker) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 123456 1000000 100";
    assertThat(ProcessDetails.startTicks(stat)).isEqualTo(123456);
  }

  @Test
  void fdinfoGivesMountIdAndInodeWhateverTheLinesAround() {
    byte[] text = "pos:\t0\nflags:\t0100002\nmnt_id:\t1234\nino:\t18446744073709\nlock:\t1: POSIX\n"
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThat(FdInfo.field(text, text.length, FdInfo.MNT_ID)).isEqualTo(1234);
    assertThat(FdInfo.field(text, text.length, FdInfo.INO)).isEqualTo(18446744073709L);
    byte[] old = "pos:\t0\nflags:\t02\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThat(FdInfo.field(old, old.length, FdInfo.MNT_ID)).isEqualTo(-1);
    assertThat(FdInfo.field(text, 10, FdInfo.MNT_ID)).as("only the bytes read count").isEqualTo(-1);
  }

  @Test
  void fdinfoFlagsAreOctalAndTellALookupAReaderAndAWriter() {
    byte[] path = "pos:\t0\nflags:\t012000000\nmnt_id:\t27\nino:\t612\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] open = "pos:\t0\nflags:\t02100002\nmnt_id:\t27\nino:\t612\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] read = "pos:\t0\nflags:\t02100000\nmnt_id:\t27\nino:\t612\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] write = "pos:\t0\nflags:\t0100001\nmnt_id:\t27\nino:\t612\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] none = "pos:\t0\nmnt_id:\t27\nino:\t612\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    assertThat(Use.ofFdFlags(FdInfo.flags(path, path.length))).as("O_PATH|O_CLOEXEC").isEqualTo(Use.LOOKUP);
    assertThat(Use.ofFdFlags(FdInfo.flags(open, open.length))).as("O_RDWR|O_NOFOLLOW|O_CLOEXEC").isEqualTo(Use.WRITE);
    assertThat(Use.ofFdFlags(FdInfo.flags(read, read.length))).as("O_RDONLY|O_NOFOLLOW|O_CLOEXEC").isEqualTo(Use.READ);
    assertThat(Use.ofFdFlags(FdInfo.flags(write, write.length))).as("O_WRONLY|O_LARGEFILE").isEqualTo(Use.WRITE);
    assertThat(Use.ofFdFlags(FdInfo.flags(none, none.length))).as("no flags line").isEqualTo(Use.UNKNOWN);
  }

  @Test
  void mountIdsTakeEachMountsIdAndDeviceAndSkipOddLines() {
    MountIds ids = new MountIds(HolderScanner.encode(java.util.List.of(Dev.of(0, 22), Dev.of(259, 1048575))));
    ids.learn("mnt:[1]", String.join("\n",
        "24 29 0:22 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=65536k,inode64",
        "612 600 259:1048575 / /data rw,relatime - ext4 /dev/nvme0n1p1 rw",
        "garbage line",
        "700 24 0:55",
        "701 24 x:55 / /bad rw - tmpfs tmpfs rw",
        ""));

    assertThat(ids.device(24)).isEqualTo(Dev.of(0, 22));
    assertThat(ids.device(612)).isEqualTo(Dev.of(259, 1048575));
    assertThat(ids.device(700)).isNull();
    assertThat(ids.device(701)).isNull();
    assertThat(ids.hasRead("mnt:[1]")).isTrue();
  }

  @Test
  void aMountOfAnUnwatchedDeviceIsKnownWithoutItsDevice() {
    MountIds ids = new MountIds(HolderScanner.encode(java.util.List.of(Dev.of(0, 22))));
    StringBuilder many = new StringBuilder("24 29 0:22 / /dev/shm rw - tmpfs tmpfs rw\n");
    for (int id = 1000; id < 201_000; id++) {
      many.append(id).append(" 24 0:").append(100 + id % 50).append(" / /x rw - tmpfs tmpfs rw\n");
    }
    ids.learn("mnt:[2]", many.toString());

    assertThat(ids.device(24)).isEqualTo(Dev.of(0, 22));
    assertThat(ids.device(150_000)).as("listed, on another device: known, and not a watched one")
        .isEqualTo(MountIds.UNWATCHED);
    assertThat(HolderScanner.contains(HolderScanner.encode(java.util.List.of(Dev.of(0, 22))), MountIds.UNWATCHED)).isFalse();
    assertThat(ids.device(999)).as("listed nowhere").isNull();
  }
}
