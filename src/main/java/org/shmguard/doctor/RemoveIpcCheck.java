package org.shmguard.doctor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.Posix;

/**
 * systemd-logind's RemoveIPC=yes deletes every POSIX shared-memory file of a user when that user's
 * last session ends, in use or not; a rank that has not attached yet then fails with "Error while
 * attaching to shared memory segment ... No such file or directory". It spares root and system
 * users (uid up to SYSTEM_UID_MAX, 999 on common builds) and users with lingering on. So this
 * warns when it is on and the users owning or holding segments here are ordinary users.
 */
final class RemoveIpcCheck implements Check {
  /** logind's SYSTEM_UID_MAX is fixed when systemd is built; 999 on the common distributions. */
  static final int FIRST_ORDINARY_UID = 1000;

  @Override
  public String name() {
    return "logind";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    LogindConfig.Setting s = LogindConfig.removeIpc(ctx.paths());
    boolean systemd = Files.isDirectory(Path.of(ctx.paths().resolve("/run/systemd/system")));
    if (!systemd && s.files().isEmpty()) {
      return List.of(Finding.of("logind-not-found", Severity.INFO, null,
          "systemd does not run here (no /run/systemd/system, no logind.conf): RemoveIPC does not apply",
          List.of("looked under " + ctx.paths().root()), List.of()));
    }
    boolean redHat = LogindConfig.redHatFamily(ctx.paths());
    boolean on;
    String how;
    if (s.value() != null) {
      on = s.value();
      how = "RemoveIPC=" + (on ? "yes" : "no") + " at " + s.source();
    } else {
      on = !redHat;
      how = "RemoveIPC is not set" + (s.files().isEmpty() ? " (no logind.conf found)" : " in " + String.join(", ", s.files()))
          + (redHat ? ": Red Hat's systemd builds default to no" : ": the upstream default is yes");
    }
    if (!on) {
      return List.of();
    }
    Map<Integer, String> users = ordinaryUsers(ctx.judgement().snapshot());
    List<String> evidence = new ArrayList<>();
    evidence.add(how);
    evidence.addAll(s.problems());
    List<String> fix = List.of(
        "mkdir -p /etc/systemd/logind.conf.d && printf '[Login]\\nRemoveIPC=no\\n' > /etc/systemd/logind.conf.d/50-shmguard.conf",
        "then systemctl restart systemd-logind (or reboot) to apply; NCCL's documentation advises RemoveIPC=no",
        "or, per user: loginctl enable-linger USER (a lingering user never fully logs out)");
    if (users.isEmpty()) {
      evidence.add("no segment here is owned or held by a user with uid >= " + FIRST_ORDINARY_UID);
      return List.of(Finding.of("logind-removeipc", Severity.INFO, null,
          "systemd-logind removes a user's shared memory at logout (RemoveIPC=yes); no job here runs as an ordinary user now",
          evidence, fix));
    }
    List<String> exposed = new ArrayList<>();
    List<String> lingering = new ArrayList<>();
    users.forEach((uid, name) -> {
      String label = name == null ? "uid " + uid : name + " (uid " + uid + ")";
      if (name != null && Files.exists(Path.of(ctx.paths().resolve("/var/lib/systemd/linger/" + name)))) {
        lingering.add(label);
      } else {
        exposed.add(label);
      }
    });
    evidence.add("segments here are owned or held by: " + String.join(", ", exposed.isEmpty() ? lingering : exposed));
    if (!lingering.isEmpty()) {
      evidence.add("lingering (never fully logged out, so spared): " + String.join(", ", lingering));
    }
    if (exposed.isEmpty()) {
      return List.of(Finding.of("logind-removeipc", Severity.INFO, null,
          "systemd-logind removes users' shared memory at logout (RemoveIPC=yes); the job users here linger, so it spares them",
          evidence, fix));
    }
    return List.of(Finding.of("logind-removeipc", Severity.WARNING, null,
        "systemd-logind deletes every /dev/shm file of " + String.join(", ", exposed)
            + " when that user's last session ends, in use or not (RemoveIPC=yes): a rank that has not attached yet"
            + " then fails with \"Error while attaching to shared memory segment ... No such file or directory\"",
        evidence, fix));
  }

  /** Ordinary (non-system) uids that own a segment or hold one, with their names where known. */
  static Map<Integer, String> ordinaryUsers(Snapshot snap) {
    Map<Integer, String> users = new TreeMap<>();
    for (ProcessInfo p : snap.processes().values()) {
      if (p.uid() >= FIRST_ORDINARY_UID) {
        users.put(p.uid(), p.user());
      }
    }
    for (Segment s : snap.segments()) {
      if (s.uid() >= FIRST_ORDINARY_UID && !users.containsKey(s.uid())) {
        users.put(s.uid(), Posix.get().userName(s.uid()).orElse(null));
      }
    }
    return users;
  }
}
