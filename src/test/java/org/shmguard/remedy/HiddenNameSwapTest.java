package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.model.Segment;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TmpfsMount;

/**
 * The owner of a leak (uid 65534) watches for its hidden name while shmguard holds the lease, moves
 * it away and puts there what it would like root to unlink: a hard link to another user's file
 * (uid 1000, mode 0666, so fs.protected_hardlinks lets 65534 link it) or a symbolic link to it.
 * Nothing is unlinked, the other user's file keeps its content, and the reap says why.
 */
class HiddenNameSwapTest {
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"ln", "ln -s"})
  void aLinkSwappedInAtTheHiddenNameIsNeverUnlinked(String link) throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      Path victim = shm.path().resolve("victim-data");
      Files.writeString(victim, "the other user's data");
      Cmd.run("chown", "1000:1000", victim.toString());
      Cmd.run("chmod", "0666", victim.toString());
      Path seg = shm.createSegment("nccl-Atk002", 4_100);
      Cmd.run("chown", "65534:65534", seg.toString());
      LeasedUnlink lastCheck = new LeasedUnlink(new SecureRandom(), () -> {
        Path hidden = hiddenNames(shm.path()).get(0);
        Cmd.run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c",
            "mv \"$1\" \"$2\" && " + link + " \"$3\" \"$1\"", "sh", hidden.toString(),
            shm.path().resolve("stolen").toString(), victim.toString());
        return false;
      });

      List<LeasedUnlink.Done> done = lastCheck.reap(dir, List.of(new LeasedUnlink.Job(segment(dir, "nccl-Atk002"),
          "test")), false);

      assertThat(done).singleElement().satisfies(d -> {
        assertThat(d.result()).isEqualTo(ReapOutcome.Result.FAILED);
        assertThat(d.detail()).contains("was replaced").contains("nothing was unlinked");
      });
      assertThat(Files.readString(victim)).isEqualTo("the other user's data");
      assertThat(Cmd.run("stat", "-c", "%h %u %a", victim.toString()).strip())
          .isEqualTo((link.equals("ln") ? "2" : "1") + " 1000 666");
      assertThat(shm.path().resolve("stolen")).exists();
    }
  }

  private static Segment segment(DirHandle dir, String name) throws IOException {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    StatxResult st = dir.lstat(n);
    long m = st.mtimeSec() * 1_000_000_000L + st.mtimeNsec();
    long c = st.ctimeSec() * 1_000_000_000L + st.ctimeNsec();
    return new Segment(org.shmguard.model.Dev.of(st.devMajor(), st.devMinor()), n, st.ino(), st.size(),
        st.allocatedBytes(), st.mode(), st.uid(), st.nlink(), m, c);
  }

  private static List<Path> hiddenNames(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(LeasedUnlink.HIDDEN_PREFIX)).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
