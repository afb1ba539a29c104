package org.shmguard.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.model.HolderRef;
import org.shmguard.model.LargeFile;
import org.shmguard.model.MountContents;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Bytes;

/**
 * The files that fill one mount, largest first, in words: the segments a pass judged, the largest
 * files of any name its listing kept ({@link MountContents#largest}), and the hidden ones (unlinked,
 * still mapped), each with who holds it now or, when nobody does, whom the daemon last saw.
 *
 * <pre>{@code
 * for (MountFillers.Filler f : MountFillers.of(report, judgement, 3)) { f.text(); }
 * }</pre>
 */
public final class MountFillers {
  private MountFillers() {}

  /**
   * One file that fills a mount.
   *
   * @param text such as {@code "big.bin 77.0M held by pid 12 (python)"}
   * @param pids who holds it now
   * @param examined whether a pass judged it (its name is one a reap pattern allows)
   */
  public record Filler(String name, long bytes, String text, List<Integer> pids, boolean examined) {}

  /** The {@code n} largest files of {@code r}'s mount. */
  public static List<Filler> of(MountReport r, Judgement j, int n) {
    return of(r, j.segments(), j.snapshot(), n);
  }

  /**
   * The same, from {@code segments} (all of the judgement's, or those of this mount alone: a
   * caller that asks for every mount groups them once).
   */
  public static List<Filler> of(MountReport r, List<Assessment> segments, Snapshot snap, int n) {
    List<Filler> all = new ArrayList<>();
    Set<Long> judged = new HashSet<>();
    for (Assessment a : segments) {
      if (!a.segment().mountDev().equals(r.mount().dev())) {
        continue;
      }
      judged.add(a.segment().ino());
      if (a.segment().allocatedBytes() == 0) {
        continue;
      }
      List<Integer> pids = a.holders().stream().map(HolderRef::pid).distinct().toList();
      String who;
      if (!pids.isEmpty()) {
        who = "held by " + names(pids, snap);
      } else if (!a.lastHolders().isEmpty()) {
        who = "last held by " + lastHolders(a.lastHolders(), snap);
      } else {
        who = "unheld (" + a.verdict().label() + ")";
      }
      String name = a.segment().displayName();
      all.add(new Filler(name, a.segment().allocatedBytes(), name + " " + Bytes.human(a.segment().allocatedBytes()) + " " + who,
          pids, true));
    }
    MountContents c = snap.contents(r.mount().dev());
    for (LargeFile f : c == null ? List.<LargeFile>of() : c.largest()) {
      if (judged.contains(f.ino())) {
        continue; // a segment above, with its verdict
      }
      List<Integer> pids = snap.holders().holders(f.key(r.mount().dev())).stream().map(HolderRef::pid).distinct().toList();
      String who = pids.isEmpty() ? "unheld" : "held by " + names(pids, snap);
      all.add(new Filler(f.name(), f.allocatedBytes(), f.name() + " " + Bytes.human(f.allocatedBytes()) + " " + who, pids, false));
    }
    for (MountReport.Hidden h : r.hidden()) {
      all.add(new Filler(h.path(), h.bytes(), h.path() + " " + Bytes.human(h.bytes()) + " hidden, held by " + names(h.pids(), snap),
          h.pids(), false));
    }
    all.sort(Comparator.comparingLong(Filler::bytes).reversed());
    return List.copyOf(all.subList(0, Math.min(all.size(), n)));
  }

  /** "pid 1234 (python), pid 1240 (python)": the first two, and how many more. */
  static String names(List<Integer> pids, Snapshot snap) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(2, pids.size()); i++) {
      sb.append(i == 0 ? "" : ", ").append(name(pids.get(i), snap.processes().get(pids.get(i))));
    }
    if (pids.size() > 2) {
      sb.append(" and ").append((pids.size() - 2) + " more");
    }
    return sb.toString();
  }

  /** "pid 282 (python), exited": whom the daemon last saw holding it, and whether they still run. */
  private static String lastHolders(List<ProcessInfo> last, Snapshot snap) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(2, last.size()); i++) {
      ProcessInfo p = last.get(i);
      ProcessInfo now = snap.processes().get(p.pid());
      boolean exited = !snap.isAlive(p.pid()) || (now != null && p.startTicks() >= 0 && now.startTicks() != p.startTicks());
      sb.append(i == 0 ? "" : ", ").append(name(p.pid(), p)).append(exited ? ", exited" : "");
    }
    if (last.size() > 2) {
      sb.append(" and ").append(last.size() - 2).append(" more");
    }
    return sb.toString();
  }

  /** "pid 1234 (python)", or "pid 1234" for a process whose command was never read. */
  static String name(int pid, ProcessInfo p) {
    return p == null || !p.known() || p.command() == null ? "pid " + pid : "pid " + pid + " (" + p.command() + ")";
  }
}
