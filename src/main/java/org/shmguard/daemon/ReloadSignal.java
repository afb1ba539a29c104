package org.shmguard.daemon;

import sun.misc.Signal;

/**
 * SIGHUP as a request to reload the configuration ({@code systemctl reload}, the unit's
 * {@code ExecReload=}), instead of the JVM's default of exiting. Each signal runs {@code reload}
 * on a thread of its own.
 */
final class ReloadSignal {
  private ReloadSignal() {}

  static void onHup(Runnable reload) {
    Signal.handle(new Signal("HUP"), s -> reload.run());
  }
}
