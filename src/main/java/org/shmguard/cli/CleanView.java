package org.shmguard.cli;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.engine.Engine;
import org.shmguard.remedy.ReapOutcome;

/** What {@code clean --json} prints: each candidate with its result and evidence. */
public record CleanView(String takenAt, boolean dryRun, List<String> blockers, List<Action> actions, long reapedBytes,
    long notExamined) {

  public record Action(String result, String detail, ScanView.SegmentView segment) {}

  public static CleanView of(Engine.Pass pass) {
    List<Action> actions = new ArrayList<>();
    long bytes = 0;
    for (ReapOutcome o : pass.outcomes()) {
      actions.add(new Action(o.result().label(), o.detail(), ScanView.segment(o.candidate(), pass.judgement().snapshot())));
      if (o.result() == ReapOutcome.Result.REAPED || o.result() == ReapOutcome.Result.WOULD_REAP) {
        bytes += o.candidate().segment().allocatedBytes();
      }
    }
    return new CleanView(pass.judgement().snapshot().takenAt().toString(), pass.dryRun(),
        pass.judgement().plan().blockers(), actions, bytes, notExamined(pass));
  }

  /** Files with reapable names this run did not examine (reap.examineLimit per mount): another run reaches them. */
  static long notExamined(Engine.Pass pass) {
    return pass.judgement().snapshot().contents().stream().mapToLong(c -> c.unexamined()).sum();
  }
}
