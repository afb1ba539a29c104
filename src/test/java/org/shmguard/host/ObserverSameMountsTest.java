package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;

/**
 * The daemon's pass after a holder's exit reuses the mounts of the pass before (an exit adds no
 * mount) but still lists every segment afresh; the next full pass finds a mount added meanwhile.
 */
class ObserverSameMountsTest {

  @Test
  void passAfterAnExitListsNewSegmentsAndAFullPassFindsANewMount() throws IOException {
    Sandbox.require();
    try (TmpfsMount first = TmpfsMount.create("size=1m")) {
      Path laterDir = Files.createDirectories(first.path().resolve("later"));
      Observer observer = new Observer(HostPaths.system(), false,
          List.of(first.path().toString(), laterDir.toString()), Clock.systemUTC());
      assertThat(devs(observer.observe())).containsExactly(first.dev().toString());

      try (TmpfsMount later = TmpfsMount.createAt(laterDir, "size=1m")) {
        first.createSegment("nccl-NewOne", 4096);
        later.createSegment("nccl-Later1", 4096);

        Snapshot afterExit = observer.observe(true);
        assertThat(devs(afterExit)).containsExactly(first.dev().toString());
        assertThat(names(afterExit)).containsExactly("nccl-NewOne");

        Snapshot full = observer.observe(false);
        assertThat(devs(full)).containsExactlyInAnyOrder(first.dev().toString(), later.dev().toString());
        assertThat(names(full)).containsExactly("nccl-Later1", "nccl-NewOne");
      }
    }
  }

  private static List<String> devs(Snapshot s) {
    return s.mounts().stream().map(ShmMount::dev).map(Object::toString).toList();
  }

  private static List<String> names(Snapshot s) {
    return s.segments().stream().map(Segment::nameText).sorted().toList();
  }
}
