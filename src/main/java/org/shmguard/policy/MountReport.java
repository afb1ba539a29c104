package org.shmguard.policy;

import java.util.List;
import org.shmguard.model.FileKey;
import org.shmguard.model.ShmMount;

/**
 * What one mount holds beyond its visible files: segments that are unlinked but still mapped or
 * open ("hidden": df counts them, ls does not), with the processes holding them.
 */
public record MountReport(ShmMount mount, int segments, long visibleBytes, long hiddenBytes, List<Hidden> hidden) {
  public MountReport {
    hidden = List.copyOf(hidden);
  }

  /** One unlinked file still held, as the holders' maps or fd links name it. */
  public record Hidden(FileKey key, String path, long bytes, List<Integer> pids) {
    public Hidden {
      pids = List.copyOf(pids);
    }
  }
}
