package org.shmguard.host;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Dev;

/**
 * Which device each mount id belongs to, for the fds of one /proc pass: /proc/PID/fdinfo names
 * an open file's mount (mnt_id) without asking its filesystem anything, and mountinfo maps that
 * id to the device. Filled lazily, one mountinfo per mount namespace per pass.
 *
 * <p>Why per pass and not from discovery: the kernel reuses a freed mount id (lowest free first),
 * so a table kept from an earlier discovery can name the wrong device for an id that a new mount
 * (a container's bind of /dev/shm) has taken since, and a holder through it would go unseen. An
 * open fd pins its mount, so an id read while the fd is open names that fd's mount; the table
 * read in the same pass is stale only if a mount is freed and its id reused within the pass, and
 * the confirming pass before an unlink reads its own.
 *
 * <pre>{@code
 * MountIds ids = new MountIds();
 * if (!ids.hasRead(ns)) ids.learn(ns, mountinfoText);
 * Dev dev = ids.device(24);   // null when no mountinfo read lists mount 24
 * }</pre>
 */
final class MountIds {
  private final Map<Integer, Dev> devByMount = new HashMap<>();
  private final Set<String> namespaces = new HashSet<>();

  /** The device of mount {@code mntId}, or null if no mountinfo read in this pass lists it. */
  Dev device(int mntId) {
    return devByMount.get(mntId);
  }

  /** Whether the mounts of namespace {@code ns} were read in this pass. */
  boolean hasRead(String ns) {
    return namespaces.contains(ns);
  }

  /** Records every mount in the mountinfo text of namespace {@code ns}. */
  void learn(String ns, String mountinfo) {
    namespaces.add(ns);
    for (MountEntry e : MountEntry.parseAll(mountinfo)) {
      devByMount.put(e.mountId(), e.dev());
    }
  }

  /** Marks {@code ns} as tried, when its mountinfo could not be read. */
  void tried(String ns) {
    namespaces.add(ns);
  }
}
