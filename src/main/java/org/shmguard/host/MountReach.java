package org.shmguard.host;

import java.io.IOException;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.MountCalls;
import org.shmguard.nativ.MountHandle;
import org.shmguard.nativ.MountIdentity;

/**
 * The one rule for reaching a mount: a path is used only when it leads to the root of the very
 * mount that was judged, by mount id and device, checked on an open handle (so a path that
 * changes after the check cannot redirect what is done through the handle).
 *
 * <pre>{@code
 * try (MountHandle h = MountReach.open(mount)) { ... act through h ... }
 * }</pre>
 */
public final class MountReach {
  private MountReach() {}

  /** Whether {@code path} leads now to the root of mount {@code mountId}, which is on {@code dev}. */
  public static boolean leadsTo(String path, long mountId, Dev dev) {
    try (MountHandle h = walk(path)) {
      return h.identity().isRootOf(mountId, dev.major(), dev.minor());
    } catch (IOException e) {
      return false; // gone, or not reachable from here
    }
  }

  /**
   * Opens the handle: a walk through a namespace's root, which can be a FUSE or network
   * filesystem that stopped answering, so it is bounded by {@link PathWalks}; once the handle is
   * open, everything done through it stays on the tmpfs.
   */
  private static MountHandle walk(String path) throws IOException {
    return PathWalks.shared().run(path, () -> MountCalls.get().openMountRoot(path));
  }

  /** Why {@code id} is not the root of {@code mount}'s verified mount, or null when it is. */
  public static String mismatch(MountIdentity id, ShmMount mount) {
    if (mount.mountId() == 0) {
      return mount.path() + " was never verified to be the mount it shows";
    }
    if (!id.isRootOf(mount.mountId(), mount.dev().major(), mount.dev().minor())) {
      return mount.path() + " no longer leads to the root of mount " + mount.mountId() + " on device " + mount.dev()
          + " (it leads to mount " + id.mountId() + " on device " + Dev.of(id.devMajor(), id.devMinor()) + ")";
    }
    return null;
  }

  /**
   * A handle on {@code mount}'s root, checked to be the mount that was judged; an IOException
   * saying why when it is not, or when shmguard may only report this mount.
   */
  public static MountHandle open(ShmMount mount) throws IOException {
    if (!mount.mayAct()) {
      throw new IOException("shmguard only reports " + mount.displayName() + ": " + mount.reportOnly());
    }
    MountHandle h = walk(mount.path());
    try {
      String why = mismatch(h.identity(), mount);
      if (why != null) {
        throw new IOException(why);
      }
      return h;
    } catch (IOException | RuntimeException e) {
      h.close();
      throw e;
    }
  }
}
