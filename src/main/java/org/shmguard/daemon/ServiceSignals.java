package org.shmguard.daemon;

import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The daemon's signals, caught from the first moment of {@code shmguard daemon}: SIGTERM and
 * SIGINT ask it to stop, SIGHUP ({@code systemctl reload}) to read its configuration again. A
 * signal that comes while the service is still starting (its socket already bound, its first
 * pass not begun) is kept and acted on once it runs, instead of the JVM's default of exiting at
 * once, which would leave the socket file behind and end with status 143 or 129.
 *
 * <pre>{@code
 * ServiceSignals signals = ServiceSignals.catchNow();
 * try (Service s = Service.start(...)) {
 *   s.runUntilStopped(signals);
 * }
 * }</pre>
 */
public final class ServiceSignals {
  private static final Logger LOG = LoggerFactory.getLogger(ServiceSignals.class);
  private static final Runnable NOTHING = () -> {};

  private final CountDownLatch stop = new CountDownLatch(1);
  private volatile Runnable onStop = NOTHING;
  // Guarded by this: a SIGHUP that races attach() is either kept (and run by attach) or runs the reload, never lost.
  private Runnable onReload = null;
  private boolean reloadWaiting;

  private ServiceSignals() {}

  /**
   * Catches SIGTERM, SIGINT and SIGHUP from now on. A process started with SIGHUP ignored (under
   * {@code nohup}, say) keeps ignoring it: the JVM will not handle a signal ignored at its start,
   * so no reload can reach it; that is said once, here.
   */
  public static ServiceSignals catchNow() {
    ServiceSignals signals = new ServiceSignals();
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), s -> signals.stop());
    }
    SignalHandler before = Signal.handle(new Signal("HUP"), s -> signals.reload());
    if (before == SignalHandler.SIG_IGN) {
      LOG.warn("SIGHUP was ignored when shmguard started (nohup?), and stays ignored: systemctl reload cannot reach "
          + "this process; restart it to apply a changed configuration");
    }
    return signals;
  }

  /** Signals that nothing sends: a service run by a test, stopped through its daemon. */
  public static ServiceSignals none() {
    return new ServiceSignals();
  }

  void stop() {
    stop.countDown();
    onStop.run();
  }

  private void reload() {
    Runnable r;
    synchronized (this) {
      r = onReload;
      if (r == null) {
        reloadWaiting = true; // kept for the running service: the configuration may have changed after it was read
        return;
      }
    }
    r.run();
  }

  /** True once SIGTERM or SIGINT came. */
  boolean stopAsked() {
    return stop.getCount() == 0;
  }

  /**
   * What the running service does on each signal; one that came before runs now. A stop may run
   * {@code stop} twice (the daemon's stop is idempotent); a reload kept from start-up runs once.
   */
  void attach(Runnable stop, Runnable reload) {
    onStop = stop;
    if (stopAsked()) {
      stop.run();
    }
    if (reload != null) {
      boolean kept;
      synchronized (this) {
        onReload = reload;
        kept = reloadWaiting;
        reloadWaiting = false;
      }
      if (kept) {
        Thread late = new Thread(reload, "shmguard-reload"); // as a signal's own thread would run it
        late.setDaemon(true);
        late.start();
      }
    }
  }
}
