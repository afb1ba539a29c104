package org.shmguard.policy;

import org.shmguard.alert.Alert;
import org.shmguard.model.ShmMount;

/**
 * Whose health a mount counts for: the node's, or only its owner's. This is the one rule every
 * health verdict and alert asks ({@code check}, the socket's CHECK, node-problem-detector's
 * conditions, the journal's priorities, the metrics' labels): a mount shmguard only reports (an
 * ordinary user's namespace, a bind of a directory of a tmpfs; see {@link ShmMount#reportOnly()})
 * is its owner's, so however full or leaky it is, it never makes the node unhealthy and never
 * pages anyone. It is still shown, under its owner's uid.
 *
 * <pre>{@code
 * if (HealthScope.of(mount) == HealthScope.NODE) { ... a problem of the node's ... }
 * Alert a = HealthScope.tag(alert, mount);   // SHM_SCOPE=owner, SHM_OWNER_UID, at most a notice
 * }</pre>
 */
public enum HealthScope {
  /** The node's own: its fill and leaks are the node's health. */
  NODE("node"),
  /** Its owner's: reported under the owner's uid, never a problem of the node's. */
  OWNER("owner");

  /** syslog's notice: what an event about an owner's mount is at most, so that no rule pages on it. */
  public static final int OWNER_PRIORITY = 5;

  private final String label;

  HealthScope(String label) {
    this.label = label;
  }

  /** The scope of {@code mount}: the node's exactly when shmguard may act on it; null (no mount) is the node's. */
  public static HealthScope of(ShmMount mount) {
    return mount == null || mount.mayAct() ? NODE : OWNER;
  }

  /** The word in metrics labels and journal fields: node or owner. */
  public String label() {
    return label;
  }

  /** The owner's uid as a label or field value: the number for an owner's mount that has one, else "". */
  public static String ownerUid(ShmMount mount) {
    return of(mount) == OWNER && mount.ownerUid() != null ? Long.toString(mount.ownerUid()) : "";
  }

  /** Whose {@code mount} is, in words: "uid 65534's", "an unknown user's" (an owner's mount), or "the node's". */
  public static String whose(ShmMount mount) {
    if (of(mount) == NODE) {
      return "the node's";
    }
    return mount.ownerUid() == null ? "an unknown user's" : "uid " + mount.ownerUid() + "'s";
  }

  /**
   * {@code alert} about a file that is its owner's matter, not the node's (a failed NCCL creation on
   * a mount with room, say), on {@code mount}: SHM_SCOPE=owner, the file's owner as SHM_OWNER_UID,
   * and at most a notice. On a mount that is already its owner's, {@link #tag} said whose.
   */
  public static Alert ownersFile(Alert alert, ShmMount mount, int fileUid) {
    if (of(mount) == NODE) {
      alert = alert.with("SHM_SCOPE", OWNER.label).with("SHM_OWNER_UID", Integer.toUnsignedLong(fileUid));
    }
    return alert.atMost(OWNER_PRIORITY);
  }

  /**
   * {@code alert} about {@code mount}, marked as its owner's when it is: SHM_SCOPE=owner, the
   * owner's SHM_OWNER_UID, and at most a notice; and with the pod or container the mount belongs
   * to, where known ({@link WorkloadFields}).
   */
  public static Alert tag(Alert alert, ShmMount mount) {
    alert = WorkloadFields.tag(alert, mount);
    if (of(mount) == NODE) {
      return alert;
    }
    return alert.with("SHM_SCOPE", OWNER.label).with("SHM_OWNER_UID", mount.ownerUid()).atMost(OWNER_PRIORITY);
  }
}
