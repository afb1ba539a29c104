package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.PidNsCreator;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * An ordinary user (uid 65534) in a user and PID namespace of their own ({@code unshare -Urpf}),
 * who chooses their pids there (ns_last_pid), on a tmpfs every user may write: run as the unit
 * runs (its capability bounding set), {@code clean} still reads every PID namespace, keeps the
 * user's file while its creator lives, and reaps a dead job's file: the user neither stalls the
 * lookup nor keeps another job's leak with a pid of their own made after it.
 */
class UserPidNamespaceCreatorTest {

  @Test
  void aUsersOwnPidNamespaceNeitherStallsTheLookupNorKeepsAnotherJobsLeakWithALaterPid() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777")) {
      // A job in its own PID namespace made torch_30000_* and was killed: a leak.
      PidNsCreator job = PidNsCreator.start(shm.path(), 30000, "torch_%d_3735928559_0", "the dead job's batch");
      Path leak = job.file();
      job.close();
      Thread.sleep(1_500); // the user's processes start provably after the leak was born
      // The user: pid 30000 (after the leak) and pid 30001, the creator of a file of their own.
      String inner = "printf mine > " + shm.path() + "/torch_$$_1_0; echo $$ ready; exec sleep 600";
      Process user = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
          "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "sh", "-c",
          "echo 29999 > /proc/sys/kernel/ns_last_pid && { sleep 600 & sh -c '" + inner + "'; }").start();
      try {
        String line = new BufferedReader(new InputStreamReader(user.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(line).as("the user's creator has pid 30001 in their namespace").isEqualTo("30001 ready");
        Path mine = shm.path().resolve("torch_30001_1_0");
        assertThat(Cmd.run("stat", "-c", "%U", mine.toString()).strip()).isEqualTo("nobody");
        Thread.sleep(11_000); // past the 10 s grace

        Cmd.Result r = CliRun.asUnit("clean", "--json", "-c", TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
                + "families:\n  pytorch:\n    grace: 10s\n").toString());

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).doesNotContain("incomplete").doesNotContain("may be alive");
        assertThat(leak).as(r.out()).doesNotExist();
        assertThat(r.out()).contains("its creator, pid 30000 (from its name), has exited; that pid now belongs to a later "
            + "process or one that cannot reach this mount (PID namespace ");
        assertThat(Files.readString(mine)).as("the user's live creator keeps the user's file").isEqualTo("mine");
        assertThat(r.out()).contains("kept: its creator, pid 30001 (from its name), is alive: pid 30001 of PID namespace ");
      } finally {
        user.descendants().forEach(ProcessHandle::destroyForcibly);
        user.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    }
  }
}
