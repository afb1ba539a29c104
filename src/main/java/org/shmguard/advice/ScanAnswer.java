package org.shmguard.advice;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.shmguard.config.Config;
import org.shmguard.policy.Health;
import org.shmguard.policy.Judgement;
import org.shmguard.view.ScanOutput;
import org.shmguard.view.ScanSource;

/**
 * The daemon's answer to {@code SCAN v1 format=text|json}: its latest pass as {@code shmguard scan}
 * prints it, by the one renderer both use ({@link ScanOutput}, below the command line and this
 * package), marked with where it came
 * from and stale when the pass is older than {@link Health#staleAfter}. Only root may ask (see
 * {@link Request.Verb#rootOnly}).
 *
 * <pre>{@code
 * responder.answerScans(new ScanAnswer(Health.staleAfter(interval), Clock.systemUTC()));
 * }</pre>
 *
 * A rendering is kept until the next pass, so probes that ask in a loop cost one rendering per
 * pass and format, not one per request.
 */
public final class ScanAnswer {
  /**
   * The most files one answer lists (about 530 bytes of JSON each, with its holders): a rendering
   * is built in the daemon's small heap, so a pass that lists more is refused ("unavailable") and
   * the command scans for itself.
   */
  static final int MAX_LISTED = 10_000;

  private record Rendered(Judgement judgement, boolean json, boolean stale, String text) {}

  private final Duration staleAfter;
  private final Clock clock;
  private final int maxListed;
  private final AtomicReference<Rendered> lastText = new AtomicReference<>();
  private final AtomicReference<Rendered> lastJson = new AtomicReference<>();

  public ScanAnswer(Duration staleAfter, Clock clock) {
    this(staleAfter, clock, MAX_LISTED);
  }

  ScanAnswer(Duration staleAfter, Clock clock, int maxListed) {
    if (staleAfter.isNegative() || staleAfter.isZero()) {
      throw new IllegalArgumentException("staleAfter must be positive, not " + staleAfter);
    }
    this.staleAfter = staleAfter;
    this.clock = clock;
    this.maxListed = maxListed;
  }

  /** With the daemon's staleness limit, from daemon.interval. */
  public static ScanAnswer of(Config config) {
    return new ScanAnswer(Health.staleAfter(config.daemon().interval()), Clock.systemUTC());
  }

  /** The reply body for the request and the latest judgement (null before the first pass). */
  String body(Request req, Judgement latest) throws ProtocolException {
    String format = req.args().getOrDefault("format", "text");
    if (!format.equals("text") && !format.equals("json")) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "format must be text or json, not \"" + Request.clip(format) + "\"");
    }
    if (latest == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "shmguard has not finished its first pass yet; ask again in a moment");
    }
    int listed = latest.segments().size();
    if (listed > maxListed) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "the last pass lists " + listed + " files, more than the "
          + maxListed + " the daemon renders for one answer; scan --local");
    }
    boolean json = format.equals("json");
    boolean stale = HealthAnswer.stale(latest, clock, staleAfter);
    AtomicReference<Rendered> cache = json ? lastJson : lastText;
    Rendered r = cache.get();
    if (r == null || r.judgement() != latest || r.stale() != stale) {
      r = new Rendered(latest, json, stale, ScanOutput.render(latest, ScanSource.daemon(latest, stale, staleAfter), json));
      cache.set(r);
    }
    return r.text();
  }
}
