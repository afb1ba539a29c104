package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.HostPaths;
import org.shmguard.host.Observer;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;

/**
 * The observe stage on real mounts and processes: one snapshot of a mount's files, their holders
 * and its capacity; a mount it only reports is measured, never listed; and the daemon's pass
 * after a holder's exit reuses the mounts of the pass before (an exit adds no mount) but still
 * lists every segment afresh, while the next full pass finds a mount added meanwhile.
 */
class ObserverTest {

  @Test
  void aSnapshotHoldsTheFilesTheirHoldersAndTheMountsCapacity() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Path held = shm.createSegment("nccl-Held01", 8192);
      shm.createSegment("nccl-Loose1", 4096);
      try (Holder h = Holder.start("map", held.toString())) {
        Snapshot snap = new Observer(HostPaths.system(), false, List.of(shm.path().toString()), Clock.systemUTC()).observe();

        assertThat(names(snap)).containsExactly("nccl-Held01", "nccl-Loose1");
        Segment heldSegment = snap.segments().stream().filter(s -> s.nameText().equals("nccl-Held01")).findFirst().orElseThrow();
        assertThat(snap.holders().holders(heldSegment.key())).extracting(r -> r.pid()).containsExactly(h.pid());
        assertThat(snap.processes()).containsKey(h.pid());
        assertThat(snap.isAlive(h.pid())).isTrue();
        ShmMount m = snap.mount(shm.dev());
        assertThat(m.usage().sizeBytes()).isEqualTo(1L << 20);
        assertThat(m.usage().usedBytes()).isEqualTo(8192 + 4096);
        assertThat(snap.contents(shm.dev()).files()).isEqualTo(2);
        assertThat(snap.complete()).isTrue();
      }
    }
  }

  @Test
  void aMountOnlyReportedIsMeasuredAndNotListed() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Path sub = Files.createDirectories(shm.path().resolve("sub"));
      Files.write(sub.resolve("nccl-Hidden"), new byte[4096]);
      Path bind = Files.createDirectories(Sandbox.MOUNTS.resolve("observer-bind-" + ProcessHandle.current().pid()));
      Cmd.run("mount", "--bind", sub.toString(), bind.toString());
      try {
        Snapshot snap = new Observer(HostPaths.system(), false, List.of(bind.toString()), Clock.systemUTC()).observe();

        assertThat(snap.segments()).isEmpty();
        assertThat(snap.mount(shm.dev()).mayAct()).isFalse();
        assertThat(snap.mount(shm.dev()).usage().usedBytes()).isEqualTo(4096);
        assertThat(snap.coverage().reportOnlyMounts()).isEqualTo(1);
        assertThat(snap.coverage().reportOnlyFiles()).isEqualTo(2); // the directory and its file
      } finally {
        Cmd.exec("umount", bind.toString());
        Files.deleteIfExists(bind);
      }
    }
  }

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
