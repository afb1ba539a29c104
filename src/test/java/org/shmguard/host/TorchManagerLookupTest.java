package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.Dev;
import org.shmguard.model.TorchManagers;

/**
 * The torch_shm_manager lookup against a fixture /proc: a manager is told by its command, its
 * owner by the filesystem uid, its clients by the connections it accepted on its listening socket
 * (its own network namespace's unix table), its reach by the tmpfs its mount namespace has at /dev/shm.
 */
class TorchManagerLookupTest {
  private static final Dev WATCHED = Dev.of(0, 42);
  private static final String SOCK = "/tmp/torch-shm-dir-apemHt/manager.sock";
  @TempDir Path root;

  private Path process(int pid, String comm, String uids, long mntNs, String shmDevice, long... sockets) throws IOException {
    Path dir = Files.createDirectories(root.resolve("proc").resolve(Integer.toString(pid)));
    Files.createDirectories(dir.resolve("ns"));
    Files.createSymbolicLink(dir.resolve("ns/pid"), Path.of("pid:[4026531836]"));
    Files.createSymbolicLink(dir.resolve("ns/mnt"), Path.of("mnt:[" + mntNs + "]"));
    Files.writeString(dir.resolve("status"), "Name:\t" + comm + "\nUid:\t" + uids + "\n");
    Files.writeString(dir.resolve("stat"), pid + " (" + comm + ") S" + " 0".repeat(18) + " 5000 0 0\n");
    Files.writeString(dir.resolve("mountinfo"), "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        + "30 22 " + shmDevice + " / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n");
    Path fd = Files.createDirectories(dir.resolve("fd"));
    Files.createSymbolicLink(fd.resolve("0"), Path.of("/dev/null"));
    Files.createSymbolicLink(fd.resolve("1"), Path.of("pipe:[16365]"));
    for (int i = 0; i < sockets.length; i++) {
      Files.createSymbolicLink(fd.resolve(Integer.toString(3 + i)), Path.of("socket:[" + sockets[i] + "]"));
    }
    Files.createDirectories(dir.resolve("net"));
    // As this kernel prints it: a listener (flags 00010000, unconnected), accepted connections
    // (connected, with the listener's path), a client's end (connected, no path), another socket.
    Files.writeString(dir.resolve("net/unix"), "Num       RefCount Protocol Flags    Type St Inode Path\n"
        + "000000009a8e21c4: 00000002 00000000 00010000 0001 01 16601 " + SOCK + "\n"
        + "00000000921de8f4: 00000003 00000000 00000000 0001 03 16603 " + SOCK + "\n"
        + "00000000921de8f5: 00000003 00000000 00000000 0001 03 16604 " + SOCK + "\n"
        + "00000000921de8f6: 00000003 00000000 00000000 0001 03 16605\n"
        + "00000000921de8f7: 00000002 00000000 00010000 0001 01 17000 /run/other.sock\n");
    return dir;
  }

  @BeforeEach
  void tree() throws IOException {
    Files.createDirectories(root.resolve("proc"));
    Files.writeString(root.resolve("proc/uptime"), "1000.00 3000.00\n");
  }

  private static BitSet live(int... pids) {
    BitSet b = new BitSet();
    for (int p : pids) {
      b.set(p);
    }
    return b;
  }

  private TorchManagers find(int... pids) {
    return new TorchManagerLookup(HostPaths.of(root.toString())).find(live(pids), Set.of(WATCHED));
  }

  @Test
  void aManagerIsFoundWithItsOwnerItsClientsAndTheTmpfsAtItsDevShm() throws IOException {
    process(500, "torch_shm_manag", "1000\t1000\t1000\t1000", 200, "0:42", 16601, 16603, 16604);
    process(501, "python3", "1000\t1000\t1000\t1000", 200, "0:42", 16605);
    TorchManagers found = find(500, 501);
    assertThat(found.looked()).isTrue();
    assertThat(found.problem()).isNull();
    assertThat(found.managers()).singleElement().satisfies(m -> {
      assertThat(m.hostPid()).isEqualTo(500);
      assertThat(m.uid()).isEqualTo(1000);
      assertThat(m.socket()).isEqualTo(SOCK);
      assertThat(m.clients()).isEqualTo(2);
      assertThat(m.servesAtShm(WATCHED)).isTrue();
      assertThat(m.servesAtShm(Dev.of(0, 99))).isFalse();
      assertThat(m.startNanos()).isPositive();
    });
  }

  @Test
  void theOwnerIsTheFilesystemUidAndAManagerWhoseClientsHaveGoneHasNone() throws IOException {
    process(500, "torch_shm_manag", "0\t0\t0\t65534", 200, "0:42", 16601);
    assertThat(find(500).managers()).singleElement().satisfies(m -> {
      assertThat(m.uid()).isEqualTo(65534);
      assertThat(m.clients()).isZero();
    });
  }

  @Test
  void aManagerWithTheTmpfsElsewhereOrAProcessOfAnotherCommandIsNotTakenForIt() throws IOException {
    process(500, "torch_shm_manag", "1000\t1000\t1000\t1000", 200, "0:77", 16601, 16603);
    process(501, "torch_shm_mana2", "1000\t1000\t1000\t1000", 201, "0:42", 16601, 16603);
    assertThat(find(500, 501).managers()).singleElement().satisfies(m -> {
      assertThat(m.hostPid()).isEqualTo(500);
      assertThat(m.servesAtShm(WATCHED)).isFalse();
    });
  }

  @Test
  void aProcessThatExitedMeanwhileIsSkipped() {
    TorchManagers found = find(4242);
    assertThat(found.managers()).isEmpty();
    assertThat(found.problem()).isNull();
  }

  @Test
  void theCommandMustBeExactlyTorchShmManagers() {
    byte[] stat = "12 (torch_shm_manag) S 1".getBytes();
    assertThat(TorchManagerLookup.isManager(stat, stat.length)).isTrue();
    byte[] other = "12 (torch_shm_manag2) S 1".getBytes();
    assertThat(TorchManagerLookup.isManager(other, other.length)).isFalse();
    assertThat(TorchManagerLookup.fsUid("Name:\tx\nUid:\t1\t2\t3\t4\nGid:\t0\n")).isEqualTo(4);
  }

  @Test
  void whatCannotBeReadOrIsPastThePassesBoundsConcernsOnlyItsOwnUid() throws IOException {
    int perUid = 3;
    process(500, "torch_shm_manag", "1000\t1000\t1000\t1000", 200, "0:42", 16601, 16603);
    int[] pids = new int[perUid + 3];
    pids[0] = 500;
    for (int i = 1; i <= perUid + 1; i++) { // a user's processes named like managers
      pids[i] = 600 + i;
      process(pids[i], "torch_shm_manag", "65534\t65534\t65534\t65534", 300, "0:42", 16601);
    }
    Path unreadable = process(700, "torch_shm_manag", "2000\t2000\t2000\t2000", 400, "0:42", 16601);
    Files.delete(unreadable.resolve("net/unix")); // a zombie's: no network namespace to read
    Files.delete(unreadable.resolve("net"));
    Files.writeString(unreadable.resolve("net"), "not a directory");
    pids[pids.length - 1] = 700;

    TorchManagers found = new TorchManagerLookup(HostPaths.of(root.toString()), perUid, 1_000).find(live(pids),
        Set.of(WATCHED));

    assertThat(found.problem()).as("nothing that concerns every uid").isNull();
    assertThat(found.missedFor(1000)).as("the owner's manager was read").isNull();
    assertThat(found.missedFor(65534)).contains("more than " + perUid);
    assertThat(found.missedFor(2000)).contains("pid 700 (uid 2000)");
    assertThat(found.managers()).filteredOn(m -> m.uid() == 65534).hasSize(perUid);
    assertThat(found.managers()).filteredOn(m -> m.uid() == 1000).singleElement()
        .satisfies(m -> assertThat(m.clients()).isEqualTo(1));
  }

  @Test
  void oneUsersLongUnixTablesSpendOnlyTheirOwnBudget() throws IOException {
    process(500, "torch_shm_manag", "1000\t1000\t1000\t1000", 200, "0:42", 16601, 16603);
    Path crowded = process(400, "torch_shm_manag", "65534\t65534\t65534\t65534", 300, "0:42", 16601);
    Files.writeString(crowded.resolve("net/unix"), "Num       RefCount Protocol Flags    Type St Inode Path\n"
        + "00000000921de8f6: 00000003 00000000 00000000 0001 03 16605\n".repeat(50));

    TorchManagers found = new TorchManagerLookup(HostPaths.of(root.toString()), 16, 20).find(live(400, 500),
        Set.of(WATCHED));

    assertThat(found.missedFor(65534)).contains("lines of unix socket tables");
    assertThat(found.missedFor(1000)).as("uid 1000's manager, read after, has a budget of its own").isNull();
    assertThat(found.managers()).extracting(TorchManagers.Manager::uid).containsExactly(1000);
  }
}
