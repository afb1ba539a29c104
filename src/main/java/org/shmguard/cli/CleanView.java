package org.shmguard.cli;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.model.FileKey;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.view.ScanView;

/** What {@code clean --json} prints: each candidate with its result and evidence. */
public record CleanView(String takenAt, boolean dryRun, List<String> blockers, List<Action> actions, long reapedBytes,
    long notExamined) {

  public record Action(String result, String detail, ScanView.SegmentView segment) {}

  public static CleanView of(PassReport pass) {
    List<Action> actions = new ArrayList<>();
    long bytes = 0;
    for (ReapOutcome o : pass.outcomes()) {
      actions.add(new Action(o.result().label(), o.detail(), ScanView.segment(o.candidate(), pass.judgement().snapshot())));
      if (o.result() == ReapOutcome.Result.REAPED || o.result() == ReapOutcome.Result.WOULD_REAP) {
        bytes += o.candidate().segment().allocatedBytes();
      }
    }
    for (Assessment a : notTried(pass)) {
      actions.add(new Action(BLOCKED, blockedDetail(a, pass.judgement()), ScanView.segment(a, pass.judgement().snapshot())));
    }
    return new CleanView(pass.judgement().snapshot().takenAt().toString(), pass.dryRun(),
        pass.judgement().plan().blockers(), actions, bytes, notExamined(pass));
  }

  /** The result of a leaked file that was not tried: the plan is blocked, or the mount is report-only. */
  static final String BLOCKED = "blocked";

  /**
   * The leaked files (leaked, failed-creation) that reaping did not try: every one when the plan
   * is blocked (an incomplete /proc pass, a foreign PID namespace), and those on mounts shmguard
   * only reports. A dry run lists them like the others, so the operator sees what would go.
   */
  static List<Assessment> notTried(PassReport pass) {
    Set<FileKey> tried = new HashSet<>();
    pass.outcomes().forEach(o -> tried.add(o.candidate().segment().key()));
    return pass.judgement().segments().stream().filter(a -> a.verdict().reapable() && !tried.contains(a.segment().key())).toList();
  }

  /** Why a leaked file was not tried: its reason (which names a report-only mount), and the plan's blockers. */
  static String blockedDetail(Assessment a, Judgement j) {
    List<String> blockers = j.plan().blockers();
    return blockers.isEmpty() ? a.reason() : a.reason() + "; not reaped: " + String.join("; ", blockers);
  }

  /** Files with reapable names this run did not examine (reap.examineLimit per mount): another run reaches them. */
  static long notExamined(PassReport pass) {
    return pass.judgement().snapshot().contents().stream().mapToLong(c -> c.unexamined()).sum();
  }
}
