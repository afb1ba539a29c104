package org.shmguard.host;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import org.shmguard.model.LargeFile;
import org.shmguard.model.MountContents;
import org.shmguard.text.Names;

/**
 * The {@link #KEPT} largest files a listing offers, whatever their names: a min-heap of fixed size,
 * so a mount of a million files costs five entries, and a name is decoded only for a file that
 * enters it.
 *
 * <pre>{@code
 * LargestFiles top = new LargestFiles();
 * top.offer(name, ino, allocatedBytes, uid); // for every regular file
 * top.largestFirst();
 * }</pre>
 */
final class LargestFiles {
  /** How many files each mount's listing keeps: enough for an alert's few names, whatever capacity.topHolders says. */
  static final int KEPT = MountContents.LARGEST_KEPT;
  /** Smallest first; the higher inode counts as smaller, so the choice does not depend on directory order. */
  private static final Comparator<LargeFile> SMALLEST_FIRST = Comparator.comparingLong(LargeFile::allocatedBytes)
      .thenComparing(Comparator.comparingLong(LargeFile::ino).reversed());

  private final PriorityQueue<LargeFile> heap = new PriorityQueue<>(KEPT + 1, SMALLEST_FIRST);

  void offer(byte[] name, long ino, long allocatedBytes, int uid) {
    if (allocatedBytes == 0) {
      return; // fills nothing
    }
    if (heap.size() == KEPT) {
      LargeFile least = heap.peek();
      if (allocatedBytes < least.allocatedBytes() || (allocatedBytes == least.allocatedBytes() && ino > least.ino())) {
        return;
      }
    }
    heap.add(new LargeFile(Names.display(name), ino, allocatedBytes, uid));
    if (heap.size() > KEPT) {
      heap.poll();
    }
  }

  List<LargeFile> largestFirst() {
    List<LargeFile> out = new ArrayList<>(heap);
    out.sort(SMALLEST_FIRST.reversed());
    return out;
  }
}
