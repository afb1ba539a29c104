package org.shmguard.nativ;

import com.sun.jna.Library;
import com.sun.jna.ptr.LongByReference;

/**
 * sd_notify(3) and sd_watchdog_enabled(3) through JNA: tells the service manager that the
 * daemon is ready, what it is doing, that it is alive, and that it is stopping.
 *
 * <pre>{@code
 * Notify n = Notify.load();
 * n.send("READY=1\nSTATUS=watching 3 mounts");
 * }</pre>
 */
public final class Notify {
  interface LibNotify extends Library {
    int sd_notify(int unsetEnvironment, String state);

    int sd_watchdog_enabled(int unsetEnvironment, LongByReference usec);
  }

  private static final class Holder {
    static final Notify INSTANCE = create();
  }

  private final LibNotify lib;
  private final String unavailable;

  private Notify(LibNotify lib, String unavailable) {
    this.lib = lib;
    this.unavailable = unavailable;
  }

  private static Notify create() {
    String[] why = new String[1];
    return new Notify(LibSystemd.load(LibNotify.class, why), why[0]);
  }

  public static Notify load() {
    return Holder.INSTANCE;
  }

  public String unavailableReason() {
    return unavailable;
  }

  /**
   * Sends newline-separated assignments; returns true if a service manager received them,
   * false when there is none to tell (NOTIFY_SOCKET unset, or no libsystemd).
   */
  public boolean send(String state) {
    return lib != null && lib.sd_notify(0, state) > 0;
  }

  /** The watchdog interval the service manager asked for, in microseconds, or 0 when it asked none. */
  public long watchdogMicros() {
    if (lib == null) {
      return 0;
    }
    LongByReference usec = new LongByReference();
    return lib.sd_watchdog_enabled(0, usec) > 0 ? usec.getValue() : 0;
  }
}
