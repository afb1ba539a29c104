package org.shmguard.remedy;

import java.util.Collection;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HolderScanner;
import org.shmguard.model.Dev;

/** Runs the confirming /proc pass just before an unlink. */
@FunctionalInterface
public interface HolderConfirmer {
  /** The pass over {@code devs}, keeping every fd on a mount no mountinfo lists. */
  HolderPass confirm(Collection<Dev> devs);

  /**
   * The pass over {@code devs} for the candidates with inode numbers {@code inodes}: an fd on a
   * mount no mountinfo lists may be kept only if one of them has its inode number.
   */
  default HolderPass confirm(Collection<Dev> devs, long[] inodes) {
    return confirm(devs);
  }

  /**
   * {@code scanner}'s pass over fd tables only ({@link HolderScanner#scanFdTables}): for a reap
   * whose write lease answers for every mapping, the exit path's.
   */
  static HolderConfirmer fdTables(HolderScanner scanner) {
    return new HolderConfirmer() {
      @Override
      public HolderPass confirm(Collection<Dev> devs) {
        return scanner.scanFdTables(devs, null);
      }

      @Override
      public HolderPass confirm(Collection<Dev> devs, long[] inodes) {
        return scanner.scanFdTables(devs, inodes);
      }
    };
  }

  /** {@code scanner}'s pass, keeping of the fds on unlisted mounts only those with a candidate's inode number. */
  static HolderConfirmer of(HolderScanner scanner) {
    return new HolderConfirmer() {
      @Override
      public HolderPass confirm(Collection<Dev> devs) {
        return scanner.scan(devs);
      }

      @Override
      public HolderPass confirm(Collection<Dev> devs, long[] inodes) {
        return scanner.scan(devs, inodes);
      }
    };
  }
}
