package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.host.HostPaths;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.RememberedHolders;
import org.shmguard.testing.Sandbox;

/**
 * The holder history file as a restart reads it, on a real directory: what shmguard wrote comes
 * back; a link, a FIFO, a file of another boot or PID namespace, one writable by others or one
 * whose checksum does not match is ignored (never waited on), and the next write replaces
 * whatever is at the name without following it.
 */
class HolderStateTest {
  private static final RememberedHolders ONE = RememberedHolders.of(List.of(new RememberedHolders.Entry(Dev.of(0, 61), 912, 3,
      "nccl-State1".getBytes(StandardCharsets.UTF_8), 1_764_151_200_123_456_789L,
      List.of(new ProcessInfo(4242, "python3", 1000, "alice", "pod:train-0", 987_654)))));
  private Path dir;
  private HolderState state;

  @BeforeEach
  void directory() throws Exception {
    Sandbox.require();
    dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "state-");
    state = HolderState.at(dir, HostPaths.system());
  }

  @Test
  void whatShmguardWroteComesBack() throws Exception {
    write(state.format().encode(ONE));
    RememberedHolders back = state.load();
    assertThat(back.entries()).hasSize(1);
    RememberedHolders.Entry e = back.entries().get(0);
    assertThat(e.mountId()).isEqualTo(912);
    assertThat(new String(e.name(), StandardCharsets.UTF_8)).isEqualTo("nccl-State1");
    assertThat(e.lastChangeNanos()).isEqualTo(1_764_151_200_123_456_789L);
    assertThat(e.holders()).containsExactly(new ProcessInfo(4242, "python3", 1000, "alice", "pod:train-0", 987_654));
  }

  @Test
  void aFileOfAnotherBootOrPidNamespaceIsNotUsed() throws Exception {
    String text = body(state.format().encode(ONE));
    String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
    write(signed(text.replace(boot, "00000000-0000-4000-8000-000000000000")));
    assertThat(state.load().entries()).as("another boot").isEmpty();
    String pidNs = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
    write(signed(text.replace(pidNs, "pid:[1]")));
    assertThat(state.load().entries()).as("another PID namespace").isEmpty();
  }

  @Test
  void anEditedCutOrOpenFileIsIgnored() throws Exception {
    byte[] good = state.format().encode(ONE);
    write(new String(good, StandardCharsets.UTF_8).replace("\"pid\":4242", "\"pid\":4243").getBytes(StandardCharsets.UTF_8));
    assertThat(state.load().entries()).as("edited").isEmpty();
    write(java.util.Arrays.copyOf(good, good.length / 2));
    assertThat(state.load().entries()).as("cut short").isEmpty();
    write(good);
    Files.setPosixFilePermissions(dir.resolve(HolderState.FILE), PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(state.load().entries()).as("writable by every user").isEmpty();
  }

  @Test
  void aLinkOrFifoAtTheNameIsNeitherFollowedNorWaitedOnAndTheNextWriteReplacesIt() throws Exception {
    Path secret = Files.writeString(dir.resolve("secret"), "root's");
    Files.createSymbolicLink(dir.resolve(HolderState.FILE), secret);
    assertThat(state.load().entries()).as("a link").isEmpty();
    Files.delete(dir.resolve(HolderState.FILE));
    assertThat(new ProcessBuilder("mkfifo", dir.resolve(HolderState.FILE).toString()).start().waitFor()).isZero();
    long before = System.nanoTime();
    assertThat(state.load().entries()).as("a FIFO").isEmpty();
    assertThat((System.nanoTime() - before) / 1_000_000).as("ms to refuse the FIFO").isLessThan(5_000);

    org.shmguard.host.KeptFile file = org.shmguard.host.KeptFile.start(dir.resolve(HolderState.FILE), 0600, false, "test");
    file.replace(() -> state.format().encode(ONE));
    assertThat(file.closeWithin(java.time.Duration.ofSeconds(10))).isTrue();
    assertThat(Files.isRegularFile(dir.resolve(HolderState.FILE), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isTrue();
    assertThat(state.load().entries()).hasSize(1);
    assertThat(Files.readString(secret)).isEqualTo("root's");
  }

  private void write(byte[] bytes) throws Exception {
    Path f = dir.resolve(HolderState.FILE);
    Files.deleteIfExists(f);
    Files.write(f, bytes);
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
  }

  private static String body(byte[] file) {
    String text = new String(file, StandardCharsets.UTF_8);
    return text.substring(0, text.lastIndexOf("\nsha256:"));
  }

  private static byte[] signed(String body) throws Exception {
    String sum = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
    return (body + "\nsha256:" + sum + "\n").getBytes(StandardCharsets.UTF_8);
  }
}
