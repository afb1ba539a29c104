package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Inotify;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TmpfsMount;

/**
 * inotify on a real tmpfs: a segment's life as its directory's events, reading without blocking
 * when nothing is queued, what it refuses to watch, and the events of a mount going away.
 */
class InotifyTest {

  @Test
  void aSegmentsLifeArrivesAsItsDirectorysEventsInOrder() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m"); Inotify in = Inotify.open()) {
      int wd = in.watch(shm.path().toString(), Inotify.SEGMENT_EVENTS);
      assertThat(in.drain()).as("nothing queued: an empty list at once").isEmpty();

      Files.write(shm.file("nccl-Life01"), new byte[4096]);
      Files.move(shm.file("nccl-Life01"), shm.file("nccl-Life02"));
      Files.delete(shm.file("nccl-Life02"));

      List<Inotify.Event> events = in.drain();
      assertThat(events).allSatisfy(e -> assertThat(e.wd()).isEqualTo(wd));
      assertThat(events).extracting(e -> describe(e)).containsExactly("create nccl-Life01", "close-write nccl-Life01",
          "moved-from nccl-Life01", "moved-to nccl-Life02", "delete nccl-Life02");
      assertThat(in.drain()).isEmpty();
    }
  }

  @Test
  void aLinkAFileOrNothingIsNotWatched() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m"); Inotify in = Inotify.open()) {
      Files.createSymbolicLink(shm.file("link"), shm.path());
      Files.writeString(shm.file("file"), "x");

      assertThatThrownBy(() -> in.watch(shm.file("link").toString(), Inotify.SEGMENT_EVENTS))
          .hasMessageStartingWith("inotify_add_watch " + shm.file("link") + ": ");
      assertThatThrownBy(() -> in.watch(shm.file("file").toString(), Inotify.SEGMENT_EVENTS))
          .hasMessageStartingWith("inotify_add_watch " + shm.file("file") + ": ");
      assertThatThrownBy(() -> in.watch(shm.file("none").toString(), Inotify.SEGMENT_EVENTS))
          .isInstanceOf(NoSuchFileException.class);
    }
  }

  @Test
  void anUnmountedDirectoryReportsUnmountAndItsWatchIsDropped() throws IOException {
    TmpfsMount shm = TmpfsMount.create("size=1m");
    try (Inotify in = Inotify.open()) {
      int wd = in.watch(shm.path().toString(), Inotify.SEGMENT_EVENTS);

      Cmd.run("umount", shm.path().toString());

      List<Inotify.Event> events = in.drain();
      assertThat(events).anySatisfy(e -> assertThat(e.is(Inotify.IN_UNMOUNT)).isTrue());
      assertThat(events).anySatisfy(e -> assertThat(e.is(Inotify.IN_IGNORED)).isTrue());
      in.unwatch(wd); // already dropped by the kernel: not an error
    } finally {
      shm.close();
    }
  }

  @Test
  void aUnwatchedDirectoryTellsNothingMore() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m"); Inotify in = Inotify.open()) {
      int wd = in.watch(shm.path().toString(), Inotify.SEGMENT_EVENTS);
      in.unwatch(wd);
      in.drain();

      Files.writeString(shm.file("nccl-After"), "x");

      assertThat(in.drain()).noneMatch(e -> e.name().length > 0);
    }
  }

  private static String describe(Inotify.Event e) {
    String what = e.is(Inotify.IN_CREATE) ? "create" : e.is(Inotify.IN_CLOSE_WRITE) ? "close-write"
        : e.is(Inotify.IN_MOVED_FROM) ? "moved-from" : e.is(Inotify.IN_MOVED_TO) ? "moved-to"
        : e.is(Inotify.IN_DELETE) ? "delete" : "mask " + Integer.toHexString(e.mask());
    return what + " " + new String(e.name(), StandardCharsets.UTF_8);
  }
}
