package org.shmguard.alert;

/**
 * Where the daemon's events go: journald when it is there, the log otherwise. Implementations
 * never throw: an event that cannot be delivered is logged instead.
 */
public interface AlertSink {
  void emit(Alert alert);

  /** One sentence for the start-up log: where alerts go. */
  String describe();
}
