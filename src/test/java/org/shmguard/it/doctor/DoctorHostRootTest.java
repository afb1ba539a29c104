package org.shmguard.it.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.host.MountEntry;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * shmguard doctor --host-root on a fixture host: a /proc with the NVIDIA driver's files, Docker
 * containers' mountinfo, cgroup and /dev, and real tmpfs mounts where their /dev/shm and the
 * host's are. The whole path runs: mount discovery from the containers' mountinfo, statvfs of the
 * real tmpfs, the GPUs each container sees, the driver version.
 */
class DoctorHostRootTest {
  private Path root;
  private final List<Path> mounts = new ArrayList<>();

  @BeforeEach
  void host() throws IOException {
    Sandbox.require();
    Files.createDirectories(Sandbox.MOUNTS);
    root = Files.createTempDirectory(Sandbox.MOUNTS, "host-");
    for (int i = 0; i < 4; i++) {
      write("proc/driver/nvidia/gpus/0000:" + (17 + i) + ":00.0/information", "Model: NVIDIA GeForce RTX 4090\n");
    }
    write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Thu Feb 20 18:33:39 UTC 2025\n");
    String hostShm = tmpfs("dev/shm", "size=1g");
    // With --host-root, the host's view of the mounts is its init's (pid 1), as on a real host.
    write("proc/1/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
        + mountId("dev/shm") + " 22 " + hostShm + " / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=1048576k,inode64\n");
    try {
      Files.createDirectories(root.resolve("proc/1/ns"));
      Files.createSymbolicLink(root.resolve("proc/1/ns/mnt"), Path.of("mnt:[4026531840]"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @AfterEach
  void unmount() {
    for (int i = mounts.size() - 1; i >= 0; i--) {
      Cmd.exec("umount", "-l", mounts.get(i).toString());
    }
  }

  @Test
  void dockerContainerWithFourGpusAndTheDefault64MbIsTooSmall() {
    container(4242, "a1b2c3d4e5f6", "size=64m", 0, 1, 2, 3);

    JsonNode f = finding(doctor(), "shm-too-small", "docker:a1b2c3d4e5f6:/dev/shm");

    assertThat(f.get("severity").asText()).isEqualTo("error");
    assertThat(f.get("summary").asText()).contains("is 64.0M; 4 NCCL ranks need at least 73.6M");
    assertThat(f.get("evidence").toString()).contains("the container sees 4 GPU(s): /dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3");
    assertThat(f.get("fix").get(0).asText()).contains("docker run --shm-size=1g");
  }

  @Test
  void twoContainersWithOneGpuEachOnThe570DriverAreTheCuMemImportLayout() {
    container(5001, "0a0a0a0a0a0a", "size=1g", 0);
    container(5002, "0b0b0b0b0b0b", "size=1g", 1);

    JsonNode report = doctor();

    JsonNode f = finding(report, "cumem-import-ordinal", null);
    assertThat(f.get("severity").asText()).isEqualTo("warning");
    assertThat(f.get("summary").asText()).contains("2 containers here each see one GPU (docker:0a0a0a0a0a0a, docker:0b0b0b0b0b0b)")
        .contains("on driver 570.124.06");
    assertThat(report.get("findings").findValuesAsText("id")).doesNotContain("shm-too-small");
  }

  private JsonNode doctor() {
    CliRun run = CliRun.of("doctor", "--json", "--host-root", root.toString(), "-c", TestConfig.write("mounts: [auto]\n").toString());
    assertThat(run.err()).isEmpty();
    return run.json();
  }

  /** A Docker container: its mountinfo, cgroup, /dev with the given GPUs, and a real tmpfs at its /dev/shm. */
  private void container(int pid, String id12, String shmOptions, int... gpus) {
    String p = "proc/" + pid + "/";
    String dev = tmpfs(p + "root/dev/shm", shmOptions);
    write(p + "mountinfo", "700 699 0:300 / / rw,relatime - overlay overlay rw\n"
        + mountId(p + "root/dev/shm") + " 700 " + dev + " / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,"
        + shmOptions + "\n");
    write(p + "cgroup", "0::/system.slice/docker-" + id12 + "0".repeat(52) + ".scope\n");
    write(p + "root/dev/nvidiactl", "");
    for (int g : gpus) {
      write(p + "root/dev/nvidia" + g, "");
    }
    try {
      Files.createDirectories(root.resolve(p + "ns"));
      Files.createSymbolicLink(root.resolve(p + "ns/mnt"), Path.of("mnt:[40265" + pid + "]"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Mounts a real tmpfs at {@code rel} under the root and returns its major:minor. */
  private String tmpfs(String rel, String options) {
    Path dir = root.resolve(rel);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    Cmd.run("mount", "-t", "tmpfs", "-o", options, "fixture-shm", dir.toString());
    mounts.add(dir);
    return Cmd.run("mountpoint", "-d", dir.toString()).strip();
  }

  /**
   * The real mount id of the tmpfs at {@code rel}: shmguard reaches a mount only through a path
   * that leads to the mount id its mountinfo names, so the fixture's mountinfo names the real one.
   */
  private int mountId(String rel) {
    try {
      String at = root.resolve(rel).toString();
      int id = -1;
      for (MountEntry e : MountEntry.parseAll(Files.readString(Path.of("/proc/self/mountinfo")))) {
        if (e.mountPoint().equals(at)) {
          id = e.mountId();
        }
      }
      assertThat(id).as("a mount at %s", at).isPositive();
      return id;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private void write(String rel, String text) {
    try {
      Path f = root.resolve(rel);
      Files.createDirectories(f.getParent());
      Files.writeString(f, text);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static JsonNode finding(JsonNode report, String id, String subject) {
    for (JsonNode f : report.get("findings")) {
      if (f.get("id").asText().equals(id) && (subject == null || subject.equals(f.path("subject").asText(null)))) {
        return f;
      }
    }
    throw new AssertionError("no " + id + " finding for " + subject + ": " + report.toPrettyString());
  }
}
