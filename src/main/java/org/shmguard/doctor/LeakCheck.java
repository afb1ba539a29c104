package org.shmguard.doctor;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.text.Bytes;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Durations;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;

/**
 * Segments the engine judged leaked, and 0-byte NCCL files (what a failed extension on a full
 * tmpfs leaves behind), per mount: how many, how much they hold, since when, and who last held
 * them where the engine remembers.
 */
final class LeakCheck implements Check {
  private static final int LISTED = 10;

  @Override
  public String name() {
    return "leaks";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    Judgement j = ctx.judgement();
    Map<String, List<Assessment>> leaked = new LinkedHashMap<>();
    Map<String, List<Assessment>> failed = new LinkedHashMap<>();
    for (Assessment a : j.segments()) {
      String mount = a.mount() == null ? a.segment().mountDev().toString() : a.mount().displayName();
      if (a.verdict() == Verdict.LEAKED) {
        leaked.computeIfAbsent(mount, k -> new ArrayList<>()).add(a);
      } else if (a.verdict() == Verdict.FAILED_CREATION) {
        failed.computeIfAbsent(mount, k -> new ArrayList<>()).add(a);
      }
    }
    List<Finding> out = new ArrayList<>();
    leaked.forEach((mount, list) -> out.add(leakedFinding(mount, list, j)));
    failed.forEach((mount, list) -> out.add(failedFinding(mount, list, j)));
    return out;
  }

  private static Finding leakedFinding(String mount, List<Assessment> list, Judgement j) {
    list.sort(Comparator.comparing((Assessment a) -> a.segment().lastChange()));
    long bytes = list.stream().mapToLong(a -> a.segment().allocatedBytes()).sum();
    Assessment oldest = list.get(0);
    String summary = list.size() + " leaked segment(s) in " + mount + " hold " + Bytes.human(bytes)
        + ", the oldest unchanged since " + at(oldest.segment().lastChange()) + " (" + Durations.human(oldest.age()) + ")";
    List<String> evidence = new ArrayList<>();
    for (Assessment a : list.subList(0, Math.min(LISTED, list.size()))) {
      StringBuilder line = new StringBuilder().append(a.segment().displayName()).append("  ")
          .append(Bytes.human(a.segment().allocatedBytes())).append("  ").append(a.kind())
          .append("  since ").append(at(a.segment().lastChange())).append(": ").append(a.reason());
      for (ProcessInfo p : a.lastHolders()) {
        line.append("; last held by ").append(p.describe());
      }
      evidence.add(line.toString());
    }
    if (list.size() > LISTED) {
      evidence.add("... and " + (list.size() - LISTED) + " more (shmguard scan lists them all)");
    }
    caveats(evidence, j.snapshot());
    List<String> fix = new ArrayList<>();
    fix.add("shmguard clean --dry-run, then shmguard clean   (unlinks only what no process holds, after a confirming pass)");
    fix.add("keep it from recurring: run shmguard daemon (the systemd unit), which reaps within moments of a job's crash");
    java.util.Set<String> reportedOnly = new java.util.TreeSet<>();
    list.stream().filter(a -> !a.mayReap() && a.family() != null).forEach(a -> reportedOnly.add(a.family()));
    if (!reportedOnly.isEmpty()) {
      fix.add("clean leaves the files of " + String.join(", ", reportedOnly) + " alone: those segment families are reported"
          + " only; set families.<family>.reap: true where their jobs never hand a segment on (docs/families.md)");
    }
    blocked(fix, j);
    return Finding.of("leaked-segments", Severity.WARNING, mount, summary, evidence, fix);
  }

  private static Finding failedFinding(String mount, List<Assessment> list, Judgement j) {
    list.sort(Comparator.comparing((Assessment a) -> a.segment().lastChange()).reversed());
    Assessment last = list.get(0);
    String summary = list.size() + " 0-byte NCCL file(s) in " + mount + ": a job failed to extend a segment here"
        + " (\"No space left on device\"), the last at " + at(last.segment().lastChange());
    List<String> evidence = new ArrayList<>();
    for (Assessment a : list.subList(0, Math.min(LISTED, list.size()))) {
      evidence.add(a.segment().displayName() + "  0 bytes, unheld, created " + at(a.segment().lastChange())
          + " (" + Durations.human(a.age()) + " ago)");
    }
    if (list.size() > LISTED) {
      evidence.add("... and " + (list.size() - LISTED) + " more");
    }
    evidence.add("NCCL 2.19+ leaves such a file when fallocate fails: its error path closes the fd and never unlinks");
    caveats(evidence, j.snapshot());
    List<String> fix = new ArrayList<>();
    fix.add("shmguard clean   (removes them; they hold no memory, but each marks a failed job)");
    fix.add("the cause is the mount's size or what fills it: see the shm-too-small, shm-full and leaked-segments findings");
    blocked(fix, j);
    return Finding.of("failed-creations", Severity.WARNING, mount, summary, evidence, fix);
  }

  private static void caveats(List<String> evidence, Snapshot snap) {
    if (!snap.hostPidNamespace()) {
      evidence.add("unconfirmed: shmguard is not in the host's PID namespace, so a holder in another one would be invisible");
    } else if (!snap.complete()) {
      evidence.add("unconfirmed: the /proc pass could not read every process");
    }
  }

  private static void blocked(List<String> fix, Judgement j) {
    for (String b : j.plan().blockers()) {
      fix.add("clean will not reap here: " + b);
    }
  }

  static String at(Instant t) {
    return t.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
