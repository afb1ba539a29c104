package org.shmguard.systemd;

import java.time.Duration;
import org.shmguard.nativ.Notify;

/**
 * What the daemon tells systemd (sd_notify): READY=1 after the first complete pass, a one-line
 * STATUS, WATCHDOG=1 from the worker loop, STOPPING=1. Without a service manager every call does
 * nothing.
 *
 * <pre>{@code
 * ServiceNotifier n = ServiceNotifier.fromEnvironment();
 * n.ready("watching 2 mounts");  ...  if (n.watchdogDue(now)) n.watchdog(now);
 * }</pre>
 */
public class ServiceNotifier {
  private final Notify notify;
  private final Duration watchdogPeriod;
  private long lastPingNanos;

  ServiceNotifier(Notify notify) {
    this.notify = notify;
    long usec = notify == null ? 0 : notify.watchdogMicros();
    // Ping at half the interval systemd asked for, as sd_watchdog_enabled(3) advises.
    this.watchdogPeriod = usec > 0 ? Duration.ofNanos(usec * 1000 / 2) : null;
  }

  public static ServiceNotifier fromEnvironment() {
    return new ServiceNotifier(System.getenv("NOTIFY_SOCKET") == null ? null : Notify.load());
  }

  /** A notifier that tells nothing to anyone (one-shot runs, tests of the loop itself). */
  public static ServiceNotifier none() {
    return new ServiceNotifier(null);
  }

  /** Whether a service manager listens; with none, there is nothing to ping. */
  public boolean active() {
    return notify != null;
  }

  /** How often the loop must ping, or null when systemd set no watchdog. */
  public Duration watchdogPeriod() {
    return watchdogPeriod;
  }

  public void ready(String status) {
    send("READY=1\nSTATUS=" + oneLine(status));
  }

  public void status(String status) {
    send("STATUS=" + oneLine(status));
  }

  /** True when a ping is due at {@code nanoTime}. */
  public boolean watchdogDue(long nanoTime) {
    return watchdogPeriod != null && nanoTime - lastPingNanos >= watchdogPeriod.toNanos();
  }

  public void watchdog(long nanoTime) {
    lastPingNanos = nanoTime;
    send("WATCHDOG=1");
  }

  /**
   * RELOADING=1 while a reloaded configuration is read and applied; {@link #ready} ends it. The
   * monotonic time (CLOCK_MONOTONIC, which System.nanoTime reads on Linux) is what systemd 253 and
   * later ask for with it.
   */
  public void reloading() {
    send("RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC=" + System.nanoTime() / 1000);
  }

  public void stopping() {
    send("STOPPING=1\nSTATUS=stopping");
  }

  private void send(String state) {
    if (notify != null) {
      notify.send(state);
    }
  }

  private static String oneLine(String s) {
    return s.replace('\n', ' ');
  }
}
