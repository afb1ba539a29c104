package org.shmguard.remedy;

import java.util.Collection;
import org.shmguard.host.HolderPass;
import org.shmguard.model.Dev;

/** Runs the confirming /proc pass just before an unlink. */
@FunctionalInterface
public interface HolderConfirmer {
  HolderPass confirm(Collection<Dev> devs);
}
