package org.shmguard.it.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.ContainerShmFinder;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ContainerStart;
import org.shmguard.policy.RemountPolicy;
import org.shmguard.remedy.ContainerShmSizer;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.remedy.Remounter;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.UserNsAttacker;
import org.shmguard.text.SizeSpec;

/**
 * Root's PREPARE as the daemon carries it out, on real processes and mounts: what it grows, and
 * what it leaves alone whatever the request says (a user's own namespace, shmguard's own
 * namespace, the host's /dev/shm shared into another, a pid that has gone).
 */
class ContainerShmSizerTest {
  private static final String ID = "c0ffee0000000000000000000000000000000000000000000000000000000002";
  private static final long GIB = 1L << 30;

  private ContainerShmSizer sizer() {
    Remounter r = new Remounter(new RemountPolicy(true, SizeSpec.ofBytes(2 * GIB), SizeSpec.ofPercent(50), Duration.ofMinutes(10)),
        16 * GIB, Clock.systemUTC());
    return new ContainerShmSizer(new ContainerShmFinder(HostPaths.system(), false), r);
  }

  private static long size(int pid) throws IOException {
    return Files.getFileStore(Path.of("/proc/" + pid + "/root/dev/shm")).getTotalSpace();
  }

  @Test
  void theTmpfsOfARootMadeNamespaceIsGrownForItsGpus() throws Exception {
    try (Holder c = Holder.startInContainer("size=64m,mode=1777", "create-map:4096", "/dev/shm/nccl-Sz0001")) {
      ContainerShmSizer.Outcome o = sizer().size(new ContainerStart(ID, c.pid(), 4, null));
      assertThat(o.result()).as(o.message()).isEqualTo(ContainerShmSizer.Outcome.Result.FITS);
      assertThat(size(c.pid())).isEqualTo(GIB);
      assertThat(o.remount().result()).as("the outcome the daemon's outputs are told").isEqualTo(RemountOutcome.Result.GROWN);
      ContainerShmSizer.Outcome again = sizer().size(new ContainerStart(ID, c.pid(), 4, null));
      assertThat(again.message()).contains("is already enough for 4 GPUs");
      assertThat(again.remount().result()).as("nothing to do, nothing wrong").isEqualTo(RemountOutcome.Result.UNNEEDED);
    }
  }

  @Test
  void aUsersOwnNamespaceIsOnlyReportedWhateverRootIsAsked() throws Exception {
    Sandbox.require();
    try (UserNsAttacker a = UserNsAttacker.ownFullShm()) {
      long before = size(a.pid());
      ContainerShmSizer.Outcome o = sizer().size(new ContainerStart(ID, a.pid(), 8, null));
      assertThat(o.result()).isEqualTo(ContainerShmSizer.Outcome.Result.REFUSED);
      assertThat(o.message()).contains("shmguard only reports this mount: its mount namespace is owned by user namespace");
      assertThat(size(a.pid())).isEqualTo(before);
    }
  }

  @Test
  void shmguardsOwnNamespaceAndTheHostsShmSharedIntoAnotherAreNotAContainersToSize() throws Exception {
    Sandbox.require();
    ContainerShmSizer.Outcome own = sizer().size(new ContainerStart(ID, (int) ProcessHandle.current().pid(), 4, null));
    assertThat(own.result()).isEqualTo(ContainerShmSizer.Outcome.Result.FITS);
    assertThat(own.message()).endsWith("nothing to size: its process shares shmguard's mount namespace, so its /dev/shm is the host's");
    Process shared = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sleep", "600").start();
    try {
      Thread.sleep(300);
      ContainerShmSizer.Outcome o = sizer().size(new ContainerStart(ID, (int) shared.pid(), 4, null));
      assertThat(o.message()).endsWith("nothing to size: it shares the host's /dev/shm (--ipc=host), which shmguard sizes as the host's");
      assertThat(o.remount()).as("no mount was decided about").isNull();
      assertThat(own.remount()).isNull();
    } finally {
      shared.destroyForcibly().waitFor();
    }
  }

  @Test
  void aPidThatHasGoneFailsAndChangesNothing() throws Exception {
    Sandbox.require();
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    ContainerShmSizer.Outcome o = sizer().size(new ContainerStart(ID, (int) gone.pid(), 4, "/merged"));
    assertThat(o.result()).isEqualTo(ContainerShmSizer.Outcome.Result.FAILED);
    assertThat(o.message()).isEqualTo("container c0ffee000000 (pid " + gone.pid() + "): cannot size its /dev/shm: its process, pid "
        + gone.pid() + ", has exited");
  }
}
