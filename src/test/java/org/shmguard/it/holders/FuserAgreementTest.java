package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** shmguard's holders for each file are the processes psmisc's fuser names for it. */
class FuserAgreementTest {

  @Test
  void scanHoldersAgreeWithFuser() {
    try (TmpfsMount shm = TmpfsMount.create("size=32m")) {
      Path a = shm.createSegment("nccl-Agree1", 9_637_892);
      Path b = shm.createSegment("nccl-Agree2", 4_100);
      Path c = shm.createSegment("nccl-Agree3", 4_100);
      Path none = shm.createSegment("nccl-Agree4", 4_100);
      try (Holder h1 = Holder.start("fd", a.toString(), "map", b.toString());
          Holder h2 = Holder.start("map", a.toString());
          Holder h3 = Holder.start("fd", c.toString(), "map", c.toString())) {
        JsonNode scan = CliRun.of("scan", "--json", "-c", TestConfig.watching(shm.path(), "2m").toString()).json();

        Map<String, Set<Integer>> fuser = fuser(a, b, c, none);
        for (Path p : List.of(a, b, c, none)) {
          String name = p.getFileName().toString();
          assertThat(new TreeSet<>(CliRun.holderPids(scan, name)))
              .as("holders of %s", name).isEqualTo(fuser.get(p.toString()));
        }
        assertThat(fuser.get(a.toString())).containsExactlyInAnyOrder(h1.pid(), h2.pid());
        assertThat(fuser.get(c.toString())).containsExactly(h3.pid());
        assertThat(fuser.get(none.toString())).isEmpty();
      }
    }
  }

  /** Runs fuser on each file (its -v table goes to stderr) and collects the pids per file. */
  private static Map<String, Set<Integer>> fuser(Path... files) {
    Map<String, Set<Integer>> byFile = new HashMap<>();
    for (Path f : files) {
      Cmd.Result r = Cmd.exec("fuser", f.toString());
      Set<Integer> pids = new TreeSet<>();
      // stdout holds the pids, stderr the file name and access letters.
      for (String tok : r.out().trim().split("\\s+")) {
        if (!tok.isEmpty()) {
          pids.add(Integer.parseInt(tok.replaceAll("[^0-9]", "")));
        }
      }
      byFile.put(f.toString(), pids);
    }
    return byFile;
  }
}
