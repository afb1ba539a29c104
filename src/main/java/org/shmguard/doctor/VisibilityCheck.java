package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.model.Snapshot;

/**
 * What the doctor could not see: outside the host's PID namespace (a container without hostPID)
 * the /proc pass misses every holder elsewhere, so "leaked" may be wrong, hidden usage is
 * undercounted, and other containers' mounts are not found; a pass that could not read some
 * processes is likewise incomplete.
 */
final class VisibilityCheck implements Check {
  @Override
  public String name() {
    return "visibility";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    Snapshot snap = ctx.judgement().snapshot();
    List<Finding> out = new ArrayList<>();
    if (!snap.hostPidNamespace()) {
      // Whether the configuration lets it reap here anyway: the judgement's plan says (Judge owns the rule).
      boolean mayReap = ctx.judgement().plan().blockers().isEmpty();
      out.add(Finding.of("not-host-pid-namespace", Severity.WARNING, null,
          "shmguard runs outside the host's PID namespace: it sees only the " + snap.processesScanned()
              + " processes of its own, so holders elsewhere are invisible and other containers' /dev/shm is not found",
          List.of("/proc/self/ns/pid is not the host's initial PID namespace",
              "the /proc pass read " + snap.processesScanned() + " processes and found " + snap.mounts().size() + " shm mount(s)",
              mayReap
                  ? "verdicts of leaked are unconfirmed and hidden usage may be undercounted; reap.requireHostPidNamespace is "
                      + "false, so shmguard reaps from here on what it sees: a holder outside this PID namespace does not stop a reap"
                  : "verdicts of leaked are unconfirmed and hidden usage may be undercounted; shmguard will not reap from here"),
          List.of("run shmguard doctor on the host (as root), or",
              "Kubernetes: hostPID: true with the host's root mounted read-only at /host, then shmguard doctor --host-root /host",
              "Docker: docker run --pid=host -v /:/host:ro ... shmguard doctor --host-root /host")));
    } else if (!snap.complete()) {
      out.add(Finding.of("incomplete-pass", Severity.WARNING, null,
          "the /proc pass could not read every process: verdicts of leaked are unconfirmed",
          snap.problems(), List.of("run shmguard doctor as root")));
    }
    if (!snap.warnings().isEmpty()) {
      out.add(Finding.of("observe-warnings", Severity.INFO, null,
          snap.warnings().size() + " thing(s) shmguard could not observe", snap.warnings(), List.of()));
    }
    return out;
  }
}
