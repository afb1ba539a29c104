package org.shmguard.remedy;

import java.util.Collection;
import org.shmguard.host.HolderPass;
import org.shmguard.model.Dev;

/** Runs the confirming /proc pass just before an unlink. */
@FunctionalInterface
public interface HolderConfirmer {
  /** The pass over {@code devs}, for the candidates with inode numbers {@code inodes}. */
  HolderPass confirm(Collection<Dev> devs, long[] inodes);
}
