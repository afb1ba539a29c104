package org.shmguard.doctor;

import java.util.List;
import org.shmguard.policy.Judgement;

/**
 * What the daemon's advice socket would answer right now, per mount, computed by the same advice
 * engine from the same judgement the doctor checked. {@link #forDoctor} builds it; {@link
 * #NOT_WIRED} answers nothing (for checks tested without the engine).
 *
 * <pre>{@code
 * AdviceSource engine = judgement -> List.of(new AdviceSource.Advice("/dev/shm", "NCCL_SHM_DISABLE=1", "64M left"));
 * }</pre>
 */
@FunctionalInterface
public interface AdviceSource {
  /** One piece of advice: for which mount, the KEY=VALUE a launch wrapper would export, and why. */
  record Advice(String mount, String setting, String reason) {}

  List<Advice> currentAdvice(Judgement judgement);

  /** Placeholder until the advice engine is merged: no advice, and {@link #wired()} is false. */
  AdviceSource NOT_WIRED = new AdviceSource() {
    @Override
    public List<Advice> currentAdvice(Judgement judgement) {
      return List.of();
    }

    @Override
    public boolean wired() {
      return false;
    }
  };

  /**
   * The advice source {@code shmguard doctor} uses: the daemon's own advice engine, run on the
   * judgement the doctor checked, for a job of {@code shape} (the doctor's --ranks and
   * --nccl-version), on this host's GPUs and driver. Without --ranks, a container's mount is
   * advised for as many ranks as GPUs the container sees (its /dev/nvidiaN), as the shm-size check
   * sizes it.
   */
  static AdviceSource forDoctor(org.shmguard.config.Config config, org.shmguard.host.HostPaths paths,
      org.shmguard.policy.JobShape shape) {
    org.shmguard.policy.AdviceEngine engine = new org.shmguard.policy.AdviceEngine(config.advice().defaultLocalRanks());
    org.shmguard.gpu.HostGpus gpus = org.shmguard.host.NvidiaProc.read(paths);
    NamespaceDevices.Lookup devices = NamespaceDevices.Lookup.from(paths);
    return judgement -> {
      List<Advice> out = new java.util.ArrayList<>();
      for (org.shmguard.model.ShmMount m : judgement.snapshot().mounts()) {
        if (m.usage() == null) {
          continue;
        }
        org.shmguard.policy.JobShape s = shape;
        if (shape.localRanks() == null && m.origin() == org.shmguard.model.MountOrigin.NAMESPACE && !m.pids().isEmpty()) {
          NamespaceDevices d = devices.of(m.pids().get(0));
          if (d.readable() && d.gpuCount() > 0) {
            s = new org.shmguard.policy.JobShape(d.gpuCount(), shape.nccl(), shape.nodes(), shape.p2p(), shape.processes(),
                shape.numa());
          }
        }
        org.shmguard.policy.Advice a = engine.advise(org.shmguard.policy.MountSpace.of(m, m.usage(), judgement), s, gpus);
        String setting = a.env().isEmpty() ? "nothing to set (" + a.action().label() + ")"
            : String.join(" ", a.env().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
        out.add(new Advice(m.displayName(), setting, a.reason()));
      }
      return out;
    };
  }

  /** False only for the placeholder. */
  default boolean wired() {
    return true;
  }
}
