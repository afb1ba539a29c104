package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.Segment;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;

/**
 * An ordinary user (uid 65534, in a user and mount namespace of its own) forces shmguard to undo
 * the reap of another user's file (uid 1000) in a sticky 1777 tmpfs, by bind-mounting it (which
 * needs no read permission) or by opening it, and races to create the freed name first with a
 * tight O_CREAT|O_EXCL loop. Whatever it does, after every round the victim's name holds the
 * victim's own file and data, the attacker's file never stays under that name, and nothing of the
 * victim's is reaped while the name is contested.
 */
class PutBackTest {
  private static final String NAME = "nccl-Victim";
  private static final String DATA = "the victim's data";
  private static final int ROUNDS = 200;

  @Test
  void aUserWhoBindMountsAnotherUsersFileNeverGetsItsNameWhateverItsRacerDoes() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      long victim = victimFile(shm, "0600");
      Path taker = CProgram.build("putback/name-taker.c");
      Process attacker = attacker("""
          : > "$1/.atk-target"
          mount --bind "$1/$2" "$1/.atk-target"
          echo ready
          exec "$3" take "$1" "$2" ATTACKER
          """, shm.path().toString(), NAME, taker.toString());
      try {
        List<LeasedUnlink.Done> rounds = rounds(shm, dir, victim, new LeasedUnlink(), false);

        assertThat(rounds).allSatisfy(d -> {
          assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(d.detail()).contains("mounted elsewhere");
        });
      } finally {
        end(attacker);
      }
      assertThat(tookLines(attacker)).as("the attacker never created the victim's name").isEmpty();
      assertThat(hiddenNames(shm.path())).isEmpty();
    }
  }

  @Test
  void aUserWhoRacesOpensOfAnotherUsersFileNeverKeepsItsNameWhateverItsRacerDoes() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      long victim = victimFile(shm, "0644");
      Path taker = CProgram.build("putback/name-taker.c");
      Process opener = attacker("echo ready; exec \"$3\" open \"$1\" \"$2\" x", shm.path().toString(), NAME,
          taker.toString());
      Process creator = attacker("echo ready; exec \"$3\" take \"$1\" \"$2\" ATTACKER", shm.path().toString(), NAME,
          taker.toString());
      List<LeasedUnlink.Done> rounds;
      try {
        rounds = rounds(shm, dir, victim, new LeasedUnlink(), true);
      } finally {
        end(opener);
        end(creator);
      }
      // Every file the racer made while the name was set aside is its own, moved off the name.
      List<String> took = tookLines(creator);
      for (Path p : hiddenNames(shm.path())) {
        assertThat(Cmd.run("stat", "-c", "%u", p.toString()).strip()).as(p + ": its owner").isEqualTo("65534");
        assertThat(Files.readString(p)).isEqualTo("ATTACKER");
      }
      // After an uncontested reap the name is free like after any unlink: the racer may take it then, once.
      boolean reaped = rounds.get(rounds.size() - 1).result() == ReapOutcome.Result.REAPED;
      assertThat(took).hasSize(hiddenNames(shm.path()).size() + (reaped && Files.exists(shm.file(NAME)) ? 1 : 0));
      System.out.printf("%d rounds: %d reaps undone, %d leases refused, %d reaped uncontested, the racer took the "
          + "free name %d times%n", rounds.size(), rounds.stream().filter(d -> d.detail().contains("put back")).count(),
          rounds.stream().filter(d -> d.detail().startsWith(LeasedUnlink.HELD_ELSEWHERE)).count(),
          rounds.stream().filter(d -> d.result() == ReapOutcome.Result.REAPED).count(), took.size());
    }
  }

  /**
   * The deterministic form of the race: the attacker binds the file under its hidden name and takes
   * its name while shmguard holds the lease. The put-back restores the victim's file under its name;
   * the attacker's file ends under the hidden name, its own, and is never reaped there while the
   * victim's file holds the name.
   */
  @Test
  void aNameTakenWhileTheFileWasSetAsideIsExchangedBackAndTheTakersFileStaysItsOwn() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      long victim = victimFile(shm, "0600");
      List<Process> attackers = new ArrayList<>();
      LeasedUnlink lastCheck = new LeasedUnlink(new SecureRandom(), () -> {
        String hidden = hiddenNames(shm.path()).get(0).getFileName().toString();
        attackers.add(attacker("""
            : > "$1/.atk-target"
            mount --bind "$1/$3" "$1/.atk-target"
            set -C
            printf ATTACKER > "$1/$2"
            echo ready
            exec sleep 600
            """, shm.path().toString(), NAME, hidden));
        return false;
      });
      try {
        List<LeasedUnlink.Done> done = lastCheck.reap(dir, List.of(new LeasedUnlink.Job(segment(dir, NAME), "unheld")),
            false);

        assertThat(done).singleElement().satisfies(d -> {
          assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(d.detail()).contains("mounted elsewhere").contains("put back").contains("uid 65534");
        });
        assertVictimIntact(shm, dir, victim, "after the put-back");
        List<Path> hidden = hiddenNames(shm.path());
        assertThat(hidden).singleElement().satisfies(p -> {
          assertThat(Cmd.run("stat", "-c", "%u", p.toString()).strip()).isEqualTo("65534");
          assertThat(Files.readString(p)).isEqualTo("ATTACKER");
        });

        // Examined later as a stranded name, the attacker's file is kept: its name is the victim's.
        String strandedName = hidden.get(0).getFileName().toString();
        List<LeasedUnlink.Done> later = new LeasedUnlink().reap(dir,
            List.of(new LeasedUnlink.Job(segment(dir, strandedName), "unheld")), false);

        assertThat(later).singleElement().satisfies(d -> {
          assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(d.detail()).contains(NAME).contains("uid 1000");
        });
        assertThat(hidden.get(0)).exists();
        assertVictimIntact(shm, dir, victim, "after the stranded name was examined");
      } finally {
        attackers.forEach(PutBackTest::end);
      }
    }
  }

  /**
   * shmguard killed between the rename and the unlink leaves the victim's file under its hidden
   * name, and its name free: a user who takes the name then does not get the victim's file reaped.
   */
  @Test
  void aFileLeftUnderItsHiddenNameIsNeverReapedWhileAnotherUsersFileHoldsItsName() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      victimFile(shm, "0600");
      String stranded = LeasedUnlink.HIDDEN_PREFIX + "0123456789abcdef-" + NAME;
      Files.move(shm.file(NAME), shm.file(stranded));
      Cmd.run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c",
          "set -C; printf ATTACKER > \"$1\"", "sh", shm.file(NAME).toString());

      List<LeasedUnlink.Done> done = new LeasedUnlink().reap(dir,
          List.of(new LeasedUnlink.Job(segment(dir, stranded), "unheld")), false);

      assertThat(done).singleElement().satisfies(d -> {
        assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(d.detail()).contains(NAME).contains("uid 65534");
      });
      assertThat(Files.readString(shm.file(stranded))).isEqualTo(DATA);

      // Once the name is free again, the stranded file is judged as any other.
      Files.delete(shm.file(NAME));
      assertThat(new LeasedUnlink().reap(dir, List.of(new LeasedUnlink.Job(segment(dir, stranded), "unheld")), false))
          .singleElement().extracting(LeasedUnlink.Done::result).isEqualTo(ReapOutcome.Result.REAPED);
    }
  }

  /**
   * ROUNDS reaps of the victim's file, each followed by what a user checks; the outcomes. With
   * {@code mayGo}, a reap that nothing contested (no open reached the file, no file took its name
   * before the unlink) is right, and ends the rounds.
   */
  private static List<LeasedUnlink.Done> rounds(TmpfsMount shm, DirHandle dir, long victim, LeasedUnlink lastCheck,
      boolean mayGo) throws IOException {
    List<LeasedUnlink.Done> out = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      LeasedUnlink.Done d = lastCheck.reap(dir, List.of(new LeasedUnlink.Job(segment(dir, NAME), "unheld")), false)
          .get(0);
      out.add(d);
      if (mayGo && d.result() == ReapOutcome.Result.REAPED) {
        return out;
      }
      assertThat(d.result()).as("round %d: %s", round, d.detail()).isNotEqualTo(ReapOutcome.Result.REAPED);
      assertVictimIntact(shm, dir, victim, "round " + round + " (" + d.result() + ": " + d.detail() + ")");
    }
    return out;
  }

  private static void assertVictimIntact(TmpfsMount shm, DirHandle dir, long victim, String when) throws IOException {
    StatxResult st = dir.lstat(NAME.getBytes(StandardCharsets.UTF_8));
    assertThat(st.ino()).as("%s: the inode under the victim's name", when).isEqualTo(victim);
    assertThat(st.uid()).as("%s: its owner", when).isEqualTo(1000);
    assertThat(Files.readString(shm.file(NAME))).as("%s: its content", when).isEqualTo(DATA);
  }

  /** The victim's file, uid 1000 with {@code mode}; its inode. */
  private static long victimFile(TmpfsMount shm, String mode) throws IOException {
    Path p = shm.file(NAME);
    Files.writeString(p, DATA);
    Cmd.run("chown", "1000:1000", p.toString());
    Cmd.run("chmod", mode, p.toString());
    return Linux.get().stat(p.toString()).ino();
  }

  /** Runs {@code script} as uid 65534 in a user and mount namespace of its own; returns once it printed "ready". */
  private static Process attacker(String script, String... args) {
    Sandbox.require();
    List<String> cmd = new ArrayList<>(List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
        "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "/bin/sh", "-ec", script, "sh"));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String line = new String(p.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
      if (!line.equals("ready\n")) {
        p.destroyForcibly();
        throw new AssertionError("the attacker did not start: " + line);
      }
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Kills it by its pid, keeping what it printed readable (Process.destroy would close its output). */
  private static void end(Process p) {
    p.toHandle().destroyForcibly();
    try {
      p.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The "took INODE" lines an ended name taker printed. */
  private static List<String> tookLines(Process p) throws IOException {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      return r.lines().filter(l -> l.startsWith("took ")).toList();
    }
  }

  private static Segment segment(DirHandle dir, String name) throws IOException {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    StatxResult st = dir.lstat(n);
    long m = st.mtimeSec() * 1_000_000_000L + st.mtimeNsec();
    long c = st.ctimeSec() * 1_000_000_000L + st.ctimeNsec();
    return new Segment(Dev.of(st.devMajor(), st.devMinor()), n, st.ino(), st.size(), st.allocatedBytes(), st.mode(),
        st.uid(), st.nlink(), m, c);
  }

  private static List<Path> hiddenNames(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(LeasedUnlink.HIDDEN_PREFIX)).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
