package org.shmguard.host;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.model.Dev;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * Lists the regular files directly in a mount's root through a directory handle, with lstat:
 * no link is followed, no subdirectory entered, and a path that no longer reaches the mount's
 * device is refused.
 */
public final class SegmentLister {
  private final Linux linux;

  public SegmentLister() {
    this(Linux.get());
  }

  SegmentLister(Linux linux) {
    this.linux = linux;
  }

  /** The files of one mount, and what kept it from being listed. */
  public record Listing(List<Segment> segments, int otherEntries, String problem) {
    public Listing {
      segments = List.copyOf(segments);
    }
  }

  public Listing list(ShmMount mount) {
    try (DirHandle dir = linux.openDirectory(mount.path())) {
      StatxResult self = dir.self();
      Dev dev = Dev.of(self.devMajor(), self.devMinor());
      if (!dev.equals(mount.dev())) {
        return new Listing(List.of(), 0, mount.path() + " is now device " + dev + ", not " + mount.dev() + "; not listed");
      }
      List<Segment> segments = new ArrayList<>();
      int other = 0;
      for (byte[] name : dir.names()) {
        StatxResult st;
        try {
          st = dir.lstat(name);
        } catch (NoSuchFileException e) {
          continue; // removed while we listed
        }
        if (!st.isRegularFile() || st.devMajor() != dev.major() || st.devMinor() != dev.minor()) {
          other++;
          continue;
        }
        segments.add(new Segment(dev, name, st.ino(), st.size(), st.allocatedBytes(), st.mode(), st.uid(),
            st.nlink(), st.mtimeSec() * 1_000_000_000L + st.mtimeNsec(), st.ctimeSec() * 1_000_000_000L + st.ctimeNsec()));
      }
      return new Listing(segments, other, null);
    } catch (IOException e) {
      return new Listing(List.of(), 0, "cannot list " + mount.path() + ": " + e.getMessage());
    }
  }
}
