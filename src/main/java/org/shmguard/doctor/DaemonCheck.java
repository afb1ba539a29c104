package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.List;

/**
 * Is the shmguard daemon running (its advice socket accepts a connection), and what advice would
 * it give now? The advice comes through {@link AdviceSource}, the seam for the advice engine.
 */
final class DaemonCheck implements Check {
  @Override
  public String name() {
    return "daemon";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    DaemonProbe.Status s = ctx.daemon().probe();
    List<Finding> out = new ArrayList<>();
    List<String> evidence = new ArrayList<>();
    if (s.pid() != null) {
      evidence.add(DaemonProbe.PID_FILE + " names pid " + s.pid() + (s.pidAlive() ? ", which is running" : ", which is not running"));
    }
    List<String> start = List.of("systemctl enable --now shmguard   (or run shmguard daemon in the foreground)",
        "without it, leaked segments stay until someone runs shmguard clean, and launch wrappers get no advice");
    if (!s.socketExists()) {
      evidence.add(0, s.socket() + " does not exist");
      out.add(Finding.of("daemon-not-running", Severity.WARNING, null, "the shmguard daemon is not running", evidence, start));
    } else if (!s.accepts()) {
      evidence.add(0, s.socket() + " exists but refuses connections: " + s.error());
      out.add(Finding.of("daemon-not-running", Severity.WARNING, null,
          "the shmguard daemon is not answering: its socket is left from a daemon that stopped or crashed", evidence,
          List.of("systemctl restart shmguard; journalctl -u shmguard says why it stopped")));
    }
    if (!ctx.advice().wired()) {
      out.add(Finding.of("daemon-advice", Severity.INFO, null,
          "the advice the daemon would give now is not shown: this build's doctor is not connected to the advice engine",
          List.of(s.accepts() ? s.socket() + " accepts connections" : "no daemon to ask"),
          List.of("ask the daemon directly through its socket, or use shmguard-launch")));
    } else {
      List<String> lines = new ArrayList<>();
      ctx.advice().currentAdvice(ctx.judgement())
          .forEach(a -> lines.add(a.mount() + ": " + a.setting() + "  (" + a.reason() + ")"));
      if (!lines.isEmpty()) {
        out.add(Finding.of("daemon-advice", Severity.INFO, null,
            "what the advice socket would tell a job starting now", lines,
            List.of("shmguard-launch -- CMD exports these for the job")));
      }
    }
    return out;
  }
}
