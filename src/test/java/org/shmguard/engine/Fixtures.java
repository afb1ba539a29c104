package org.shmguard.engine;

import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.shmguard.config.Config;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.Planner;
import org.shmguard.policy.ReapPlan;

/** Values built by hand for the engine's tests: a mount, a quiet judgement, the daemon's planner. */
public final class Fixtures {
  public static final ShmMount MOUNT = new ShmMount(Dev.of(0, 25), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null,
      List.of(), null, null);
  static final Judgement JUDGEMENT = new Judgement(new Snapshot(Instant.EPOCH, List.of(MOUNT), List.of(),
      HolderIndex.empty(), new BitSet(), Map.of(), List.of(), List.of(), true, 0), List.of(), List.of(),
      new ReapPlan(List.of(), List.of()));
  static final Plan EMPTY_PLAN = new Plan(List.of(), null);

  private Fixtures() {}

  public static Planner planner(Config config) {
    Config.Capacity c = config.capacity();
    return new Planner(config.reap().policy(), config.remount().policy(), c.policy(), c.topHolders());
  }
}
