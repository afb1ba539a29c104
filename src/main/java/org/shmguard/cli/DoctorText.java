package org.shmguard.cli;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.doctor.DoctorReport;
import org.shmguard.doctor.Finding;
import org.shmguard.doctor.Severity;

/** The human form of {@code doctor}: a one-line verdict, then the findings grouped by severity, each with its evidence and fix. */
public final class DoctorText {
  private DoctorText() {}

  public static String render(DoctorReport r) {
    StringBuilder out = new StringBuilder();
    long errors = r.count(Severity.ERROR);
    long warnings = r.count(Severity.WARNING);
    long notes = r.count(Severity.INFO);
    List<String> ok = new ArrayList<>();
    r.checks().forEach(c -> {
      if (c.findings() == 0) {
        ok.add(c.name());
      }
    });
    out.append("shmguard doctor: ")
        .append(errors == 0 && warnings == 0 ? "nothing wrong found" : plural(errors, "error") + ", " + plural(warnings, "warning"))
        .append(", ").append(plural(notes, "note")).append(" (").append(plural(r.checks().size(), "check"))
        .append(ok.isEmpty() ? "" : "; clean: " + String.join(", ", ok)).append(")\n");
    for (Severity s : Severity.values()) {
      List<Finding> group = r.findings().stream().filter(f -> f.severity() == s).toList();
      if (group.isEmpty()) {
        continue;
      }
      out.append('\n').append(s == Severity.INFO ? "NOTES" : s.label().toUpperCase(java.util.Locale.ROOT) + "S").append('\n');
      for (Finding f : group) {
        out.append("  [").append(f.id()).append("] ").append(f.summary()).append('\n');
        for (String e : f.evidence()) {
          out.append("      ").append(e).append('\n');
        }
        for (int i = 0; i < f.fix().size(); i++) {
          out.append(i == 0 ? "    fix: " : "         ").append(f.fix().get(i)).append('\n');
        }
      }
    }
    return out.toString();
  }

  private static String plural(long n, String word) {
    return n + " " + word + (n == 1 ? "" : "s");
  }
}
