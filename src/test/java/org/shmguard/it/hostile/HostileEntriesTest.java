package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Whatever a user or an attacker puts in a shm mount: links to files elsewhere, hard links,
 * FIFOs, directories, names with newlines, invalid UTF-8 or 255 bytes. shmguard must follow no
 * link, enter no directory, touch nothing outside the mount, and not crash.
 */
class HostileEntriesTest {

  @Test
  void linksFifosDirectoriesAndOddNamesAreHandledWithoutFollowingAnything() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777"); TmpfsMount elsewhere = TmpfsMount.create("size=1m")) {
      Path outside = elsewhere.createSegment("nccl-Outsde", 4100);
      Files.createSymbolicLink(shm.file("nccl-SymLnk"), outside);
      Files.createSymbolicLink(shm.file("nccl-Dangle"), Path.of("/nonexistent/nccl-x"));
      Path hard = shm.createSegment("nccl-HardL1", 4100);
      Files.createDirectory(shm.file("nccl-subdir"));
      Files.createLink(shm.file("nccl-subdir").resolve("nccl-HardL2"), hard);
      Path inner = shm.file("nccl-subdir").resolve("nccl-Inner1");
      Files.write(inner, new byte[4100]);
      Cmd.run("mkfifo", shm.file("nccl-Fifo01").toString());
      Path newline = shm.createSegment("nccl-new\nline", 100);
      Path longName = shm.createSegment("nccl-" + "x".repeat(250), 100);
      // A name that is not UTF-8: the JVM cannot spell it, so the shell makes it.
      Cmd.run("sh", "-c", "printf x > \"$1/$(printf 'nccl-\\377\\376bad')\"", "sh", shm.path().toString());
      Path config = TestConfig.watching(shm.path(), "0s");

      CliRun scan = CliRun.of("scan", "--json", "-c", config.toString());
      assertThat(scan.status()).as(scan.err()).isZero();
      JsonNode json = scan.json();
      List<String> names = new ArrayList<>();
      json.get("segments").forEach(s -> names.add(s.get("name").asText()));
      assertThat(names).contains("nccl-HardL1", "nccl-new\\x0aline", "nccl-" + "x".repeat(250), "nccl-\\xff\\xfebad")
          .doesNotContain("nccl-SymLnk", "nccl-Dangle", "nccl-subdir", "nccl-Fifo01", "nccl-Inner1", "nccl-HardL2");
      assertThat(CliRun.verdictOf(json, "nccl-HardL1")).isEqualTo("ignored");

      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(outside).exists();
      assertThat(shm.file("nccl-SymLnk")).isSymbolicLink();
      assertThat(Files.isSymbolicLink(shm.file("nccl-Dangle"))).isTrue();
      assertThat(hard).exists();
      assertThat(inner).exists();
      assertThat(shm.file("nccl-Fifo01")).exists();
      assertThat(newline).doesNotExist();
      assertThat(longName).doesNotExist();
      assertThat(Cmd.run("ls", "-b", shm.path().toString())).doesNotContain("bad");
    }
  }
}
