package org.shmguard.daemon;

import sun.misc.Signal;

/**
 * SIGTERM and SIGINT as a request to stop: the daemon finishes its pass, tells systemd
 * STOPPING=1 and exits 0, instead of the JVM's default of exit status 143 mid-pass.
 */
public final class StopSignals {
  private StopSignals() {}

  public static void onTermOrInt(Runnable stop) {
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), s -> stop.run());
    }
  }
}
