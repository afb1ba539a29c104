package org.shmguard.policy;

import org.shmguard.model.Segment;
import org.shmguard.model.Snapshot;
import org.shmguard.model.TorchManagers;
import org.shmguard.policy.family.SegmentFamily;

/**
 * Whether an unheld file past its grace is still waiting in a live job to be received, so that it
 * is {@link Verdict#WAITING}, neither reaped nor alerted as leaked. Pure: it reads the snapshot.
 *
 * <pre>{@code
 * String why = WaitingInJob.why(family, segment, snapshot);   // null: no live job keeps it
 * }</pre>
 *
 * <p>PyTorch's file_system strategy registers every named file with its job's
 * {@code torch_shm_manager}, which unlinks all of them about 2 s after its last client has
 * disconnected (torch/lib/libshm/manager.cpp). While a manager that may hold the registration
 * still has a client, a consumer may yet open the file by name, even after the producer that made
 * it (the pid in its name) has exited. A manager counts only when all of these hold:
 * <ul>
 *   <li>its filesystem uid is the file's owner: the manager runs as the job that started it, and
 *       its clients create their files as that uid; a manager of another uid keeps nothing;
 *   <li>its mount namespace has the file's tmpfs at /dev/shm, where it unlinks the names
 *       registered with it;
 *   <li>it has at least one client connected: with none left, it unlinks everything and exits;
 *   <li>it did not start after the file was made (statx btime) by more than
 *       {@link CreatorEvidence#START_SLACK_NANOS}: a job's first file is made just before its
 *       manager is started, and a later job's manager never saw this file's registration.
 * </ul>
 * A job killed whole (its manager SIGKILLed with its clients) leaves no manager: its files are
 * judged as before, by their creator's pid and the grace. Where the lookup could not read a
 * manager of the file's owner (or a process whose owner it could not tell), a manager may have
 * been missed, and the file waits too; a manager of another uid that could not be read keeps
 * nothing ({@link TorchManagers#missedFor}), so no user can make another's files wait.
 */
final class WaitingInJob {
  private WaitingInJob() {}

  /** Why {@code s} waits in a live job (the reason's clause), or null when no live job keeps it. */
  static String why(SegmentFamily family, Segment s, Snapshot snap) {
    if (family == null || !family.registeredWithTorchManager()) {
      return null;
    }
    TorchManagers found = snap.torchManagers();
    if (!found.looked()) {
      return null;
    }
    for (TorchManagers.Manager m : found.managers()) {
      if (keeps(m, s)) {
        return "its job may still receive it: torch_shm_manager pid " + m.hostPid() + " (uid " + m.uid() + ") has "
            + m.clients() + (m.clients() == 1 ? " client" : " clients")
            + (m.socket() == null ? "" : " on " + m.socket())
            + " and unlinks the files registered with it once its last client has gone";
      }
    }
    String missed = found.missedFor(s.uid());
    if (missed != null) {
      return "its job may still receive it: a torch_shm_manager of its owner may have been missed (" + missed + ")";
    }
    return null;
  }

  /** Whether manager {@code m} may hold {@code s}'s registration and still has a client. */
  static boolean keeps(TorchManagers.Manager m, Segment s) {
    if (m.uid() != s.uid() || m.clients() == 0 || !m.servesAtShm(s.mountDev())) {
      return false;
    }
    return !(s.bornKnown() && m.startNanos() >= 0 && m.startNanos() > s.btimeNanos() + CreatorEvidence.START_SLACK_NANOS);
  }
}
