package org.shmguard.daemon;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.shmguard.alert.AlertSink;
import org.shmguard.policy.Action;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Remounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's {@link Actor}: reaps to the engine's reaper (the same code as the one-shot
 * {@code clean}), alerts to the sink, advice to the advice service, remounts to the remounter. A
 * daemon started without an advice service or a remounter (as tests start one) reaps and raises
 * its alerts and does nothing else.
 */
final class Acts implements Actor {
  private static final Logger LOG = LoggerFactory.getLogger(Acts.class);
  private final Function<Action.Reap, List<ReapOutcome>> reaper;
  private final AlertSink sink;
  private final Consumer<Judgement> advice;
  private final Remounter remounter;

  /**
   * @param reaper carries out a reap and reports each candidate's outcome ({@code engine::reap})
   * @param advice told each judgement to advise from, or null for no advice
   * @param remounter carries out remounts (its outcome listener hears the result), or null for none
   */
  Acts(Function<Action.Reap, List<ReapOutcome>> reaper, AlertSink sink, Consumer<Judgement> advice, Remounter remounter) {
    this.reaper = reaper;
    this.sink = sink;
    this.advice = advice;
    this.remounter = remounter;
  }

  static Acts bare(Function<Action.Reap, List<ReapOutcome>> reaper, AlertSink sink) {
    return new Acts(reaper, sink, null, null);
  }

  @Override
  public List<ReapOutcome> carry(Action action) {
    if (action instanceof Action.Reap r) {
      return reaper.apply(r);
    } else if (action instanceof Action.Raise r) {
      sink.emit(r.alert());
    } else if (action instanceof Action.Advise a) {
      if (advice != null) {
        advice.accept(a.judgement());
      }
    } else if (action instanceof Action.Remount m) {
      if (remounter != null) {
        remounter.grow(m.mount(), null, m.trigger());
      } else {
        LOG.debug("no remounter: {} is not grown ({})", m.mount().displayName(), m.trigger());
      }
    }
    return List.of();
  }
}
