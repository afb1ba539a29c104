package org.shmguard.cli;

import java.util.List;
import org.shmguard.engine.PassReport;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Bytes;
import org.shmguard.text.Counts;
import org.shmguard.text.Durations;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.view.ScanText;

/** The human form of clean (that of scan is {@link ScanText}). */
final class TextReport {
  private TextReport() {}

  static String clean(PassReport pass) {
    Judgement j = pass.judgement();
    StringBuilder out = new StringBuilder();
    List<Assessment> blocked = CleanView.notTried(pass);
    if (pass.outcomes().isEmpty() && blocked.isEmpty()) {
      out.append("Nothing to reap (").append(Counts.of(j.snapshot().contents().stream().mapToLong(c -> c.files()).sum(), "file"))
          .append(" in ").append(Counts.of(j.mounts().size(), "mount")).append(").\n");
    }
    long bytes = 0;
    for (ReapOutcome o : pass.outcomes()) {
      Assessment a = o.candidate();
      out.append(line(o.result().label(), a, o.detail()));
      if (o.result() == ReapOutcome.Result.REAPED || o.result() == ReapOutcome.Result.WOULD_REAP) {
        bytes += a.segment().allocatedBytes();
      }
    }
    for (Assessment a : blocked) {
      out.append(line(CleanView.BLOCKED, a, CleanView.blockedDetail(a, j)));
    }
    if (!pass.outcomes().isEmpty()) {
      out.append(pass.dryRun() ? "Would free " : "Freed ").append(Bytes.human(bytes)).append(".\n");
    }
    if (!blocked.isEmpty()) {
      long held = blocked.stream().mapToLong(a -> a.segment().allocatedBytes()).sum();
      out.append(Counts.of(blocked.size(), "leaked file")).append(" (").append(Bytes.human(held)).append(") ")
          .append(blocked.size() == 1 ? "is" : "are").append(" not reaped: see \"not reaping\" below.\n");
    }
    long more = CleanView.notExamined(pass);
    if (more > 0) {
      out.append(Counts.of(more, "more file")).append(" with reapable names ").append(more == 1 ? "was" : "were")
          .append(" not examined (reap.examineLimit per mount); run clean again to reach them.\n");
    }
    ScanText.footer(out, j);
    return out.toString();
  }

  /** One candidate: what was (or would be) done, the file, its size, kind and age, its verdict, and why. */
  private static String line(String result, Assessment a, String detail) {
    return String.format("%-10s %s/%s  %s  %s, age %s, %s: %s%n", result,
        a.mount() == null ? "?" : a.mount().displayName(), a.segment().displayName(), Bytes.human(a.segment().allocatedBytes()),
        a.kind(), Durations.human(a.age()), a.verdict().label(), detail);
  }
}
