package org.shmguard.bench;

final class DaemonBench {
  private DaemonBench() {}

  static void run(Results r, BenchParams params, NativeTools tools) {
    throw new UnsupportedOperationException("not yet");
  }
}
