package org.shmguard.daemon;

import java.util.function.Consumer;
import org.shmguard.alert.AlertSink;
import org.shmguard.policy.Action;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.Remounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's {@link Actor}: alerts to the sink, advice to the advice service, remounts to the
 * remounter. A daemon started without an advice service or a remounter (as tests start one)
 * raises its alerts and does nothing else.
 */
final class Acts implements Actor {
  private static final Logger LOG = LoggerFactory.getLogger(Acts.class);
  private final AlertSink sink;
  private final Consumer<Judgement> advice;
  private final Remounter remounter;

  /**
   * @param advice told each judgement to advise from, or null for no advice
   * @param remounter carries out remounts (its outcome listener hears the result), or null for none
   */
  Acts(AlertSink sink, Consumer<Judgement> advice, Remounter remounter) {
    this.sink = sink;
    this.advice = advice;
    this.remounter = remounter;
  }

  static Acts alertsOnly(AlertSink sink) {
    return new Acts(sink, null, null);
  }

  @Override
  public void carry(Action action) {
    if (action instanceof Action.Raise r) {
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
  }
}
