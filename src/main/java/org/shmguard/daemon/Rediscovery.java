package org.shmguard.daemon;

import java.util.Set;
import org.shmguard.model.Dev;

/** Looks for the current set of mounts without a full pass (the REDISCOVER trigger, on the pass thread). */
interface Rediscovery {
  Set<Dev> mounts();

  /** True, once, when a container ended on a mount that is still there (see MountChanges.containerEnded). */
  default boolean containerEnded() {
    return false;
  }
}
