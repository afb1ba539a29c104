package org.shmguard.remedy;

import java.io.IOException;
import org.shmguard.host.ContainerShmFinder;
import org.shmguard.host.MountReach;
import org.shmguard.model.ContainerStart;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.MountHandle;
import org.shmguard.policy.ContainerShmPolicy;
import org.shmguard.policy.RemountPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sizes a starting container's /dev/shm for its GPUs, as root's PREPARE request (the OCI hook)
 * asks: finds the container's own tmpfs through its pid ({@link ContainerShmFinder}), decides the
 * size ({@link ContainerShmPolicy}: the need, the recommendation, the caps of
 * {@code remount.maxSize} and the container's memory limit) and grows it through the
 * {@link Remounter}, so every rule of {@code remount.*} holds (enabled, grow only, never below
 * what is used, the cooldown, a dry run). Every outcome that decided about a mount, the ones that
 * change nothing included, carries its {@link RemountOutcome}, which the daemon's outputs are told
 * (the journal names the container).
 *
 * <pre>{@code
 * ContainerShmSizer.Outcome o = new ContainerShmSizer(new ContainerShmFinder(paths, false), remounter).size(start);
 * }</pre>
 */
public final class ContainerShmSizer {
  private static final Logger LOG = LoggerFactory.getLogger(ContainerShmSizer.class);
  private final ContainerShmFinder finder;
  private final Remounter remounter;

  public ContainerShmSizer(ContainerShmFinder finder, Remounter remounter) {
    this.finder = finder;
    this.remounter = remounter;
  }

  /**
   * What a request came to: {@code FITS} when the container's /dev/shm now holds what its GPUs
   * need (grown, already large enough, or none of its own to size), {@code REFUSED} when the
   * policy left it short, {@code FAILED} when it could not be looked at or changed.
   */
  public record Outcome(Result result, String message, RemountOutcome remount) {
    public enum Result { FITS, REFUSED, FAILED }

    /** An outcome that decided about no mount (none to size, or none could be looked at). */
    public Outcome(Result result, String message) {
      this(result, message, null);
    }
  }

  public Outcome size(ContainerStart c) {
    String who = "container " + c.shortId() + " (pid " + c.pid() + ")";
    try (ContainerShmFinder.Found f = finder.find(c)) {
      if (f.mount() == null) {
        LOG.info("{} starts with {} GPU(s): nothing to size: {}", who, c.gpus(), f.none());
        return new Outcome(Outcome.Result.FITS, who + ": nothing to size: " + f.none());
      }
      ShmMount m = f.mount();
      String trigger = who + " starts with " + c.gpus() + " GPU(s), asked by its OCI hook";
      if (!m.mayAct()) {
        return refused(remounter.grow(m, null, trigger));
      }
      FsUsage usage;
      try (MountHandle h = MountReach.open(m)) {
        usage = h.usage();
      }
      RemountPolicy policy = remounter.policy();
      ContainerShmPolicy.Sizing s = new ContainerShmPolicy(policy.max())
          .size(c.gpus(), usage.sizeBytes(), f.memoryLimitBytes(), remounter.ramBytes());
      if (s.enough()) {
        RemountOutcome left = new RemountOutcome(RemountOutcome.Result.UNNEEDED, m.displayName(), usage.sizeBytes(),
            usage.sizeBytes(), who + ": " + s.reason(), m.options(), m.options());
        return new Outcome(Outcome.Result.FITS, who + ": " + s.reason(), left);
      }
      remounter.forget(m.dev()); // a new tmpfs: a cooldown on its device number was another tmpfs's
      RemountOutcome o = remounter.grow(m, s.targetBytes(), trigger + ": " + s.reason());
      if (!f.stillRunning()) {
        LOG.warn("{} exited while its /dev/shm was sized", who);
      }
      if (o.result() == RemountOutcome.Result.GROWN) {
        return new Outcome(s.fits() ? Outcome.Result.FITS : Outcome.Result.REFUSED, o.summary() + "; " + s.reason(), o);
      }
      return refused(o);
    } catch (IOException e) {
      String why = who + ": cannot size its /dev/shm: " + e.getMessage();
      LOG.warn("{}", why);
      return new Outcome(Outcome.Result.FAILED, why);
    }
  }

  private static Outcome refused(RemountOutcome o) {
    return new Outcome(o.result() == RemountOutcome.Result.FAILED ? Outcome.Result.FAILED : Outcome.Result.REFUSED, o.summary(), o);
  }
}
