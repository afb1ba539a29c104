package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.FuseFixture;
import org.shmguard.testing.KubeletLayout;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * uid 65534 against pod volume discovery: what it mounts at a path shaped like a pod's volume (a
 * tmpfs in a user namespace of its own, a FUSE mount through fusermount3) is never taken for a
 * pod's volume, and what it plants where a pod's name is read (a log directory it may write, a
 * link, an entry of its own) never names a pod.
 */
class PodVolumeAttackTest {
  private static final String UID = "0d6f3c1e-8a2b-4c5d-9e7f-1234567890ab";
  private static final String[] NOBODY = FuseFixture.NOBODY;

  private static Path config(KubeletLayout k, String runtimes) {
    return TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n" + runtimes);
  }

  /** The layout readable by every user, as /var/lib/kubelet and /var/log/pods are. */
  private static KubeletLayout open() throws Exception {
    KubeletLayout k = KubeletLayout.create();
    Files.setPosixFilePermissions(k.dir(), PosixFilePermissions.fromString("rwxr-xr-x"));
    return k;
  }

  private static boolean anyVolumeOf(PassReport pass, String uid) {
    return pass.judgement().snapshot().mounts().stream().map(ShmMount::workload)
        .anyMatch(w -> w != null && uid.equals(w.podUid()));
  }

  @Test
  void aTmpfsAUserMountsAtAPodVolumePathInTheirOwnNamespaceIsNoPodsVolumeAndKeepsItsFile() throws Exception {
    try (KubeletLayout k = open()) {
      Path dir = k.volumeDir(UID, "dshm");
      try (UserNsAttacker a = UserNsAttacker.mountsTmpfsAt(dir)) {
        Path planted = Path.of("/proc", Integer.toString(a.pid()), "root").resolve(dir.toString().substring(1)).resolve("nccl-Atk001");
        assertThat(Files.size(planted)).isEqualTo(4100);
        PassReport pass = Engine.create(TestConfig.load(config(k, k.runtimesYaml())), HostPaths.system()).clean(false);
        assertThat(anyVolumeOf(pass, UID)).as("their tmpfs taken for the pod's volume").isFalse();
        assertThat(pass.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Atk001"));
        assertThat(Files.size(planted)).isEqualTo(4100);
      }
    }
  }

  @Test
  void aFuseMountAUserMakesAtAPodVolumePathIsNoPodsVolume() throws Exception {
    try (KubeletLayout k = open()) {
      Path dir = k.volumeDir(UID, "dshm");
      // fusermount3 lets a user mount only on a directory they may write: kubelet's are root's
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> FuseFixture.ofNobodyAt(dir).close())
          .hasMessageContaining("did not mount");
      // and where a layout gave them one, their mount is still no pod's volume
      Cmd.run("chown", "65534:65534", dir.toString());
      try (FuseFixture fs = FuseFixture.ofNobodyAt(dir)) {
        assertThat(Files.readAllLines(Path.of("/proc/self/mountinfo"))).anyMatch(l -> l.contains(" " + dir + " ") && l.contains(" - fuse"));
        PassReport pass = Engine.create(TestConfig.load(config(k, k.runtimesYaml())), HostPaths.system()).clean(false);
        assertThat(anyVolumeOf(pass, UID)).isFalse();
        assertThat(pass.judgement().snapshot().mounts()).noneMatch(m -> m.path().equals(dir.toString()));
      }
    }
  }

  @Test
  void aPodLogEntryAUserCouldPlantNamesNoPod() throws Exception {
    try (KubeletLayout k = open()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=1m");
      // a pod log directory every user may write (sticky, as /tmp): uid 65534 makes the entry
      Path shared = Files.createDirectories(k.dir().resolve("shared-logs"));
      Cmd.run("chmod", "1777", shared.toString());
      Cmd.run(cat(NOBODY, "mkdir", shared.resolve("training_llama-0_" + UID).toString()));
      assertUnnamed(k, dshm, shared);

      // a link to a good-looking log directory, planted by uid 65534 where the configuration points
      k.podLog("training", "llama-0", UID);
      Path link = shared.resolve("pods");
      Cmd.run(cat(NOBODY, "ln", "-s", k.podLogs().toString(), link.toString()));
      assertUnnamed(k, dshm, link);

      // an entry that is not root's, in root's own directory
      Path logs = Files.createDirectories(k.dir().resolve("log2"));
      Path entry = Files.createDirectories(logs.resolve("training_llama-0_" + UID));
      Cmd.run("chown", "65534:65534", entry.toString());
      assertUnnamed(k, dshm, logs);

      // the same layout with root's entry names the pod: the refusals above are the rules, not a fault
      JsonNode named = PodVolumeTest.volumeIn(CliRun.scanJson(config(k, k.runtimesYaml())), dshm.path()).get("workload");
      assertThat(named.get("podName").asText()).isEqualTo("llama-0");
    }
  }

  private static void assertUnnamed(KubeletLayout k, TmpfsMount dshm, Path podLogs) {
    JsonNode w = PodVolumeTest.volumeIn(CliRun.scanJson(config(k, k.runtimesYaml(podLogs))), dshm.path()).get("workload");
    assertThat(w.get("podUid").asText()).isEqualTo(UID);
    assertThat(w.has("podName")).as("named from %s", podLogs).isFalse();
  }

  private static String[] cat(String[] a, String... b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }
}
