package org.shmguard.bench;

import java.nio.file.Path;

/**
 * What the bench runs on and how long, from {@code -Dbench.*} system properties (the bench profile
 * in pom.xml passes them, with defaults sized for a 2-core machine).
 *
 * @param processes holder processes in the main fixture
 * @param segments segment files in the main fixture; a quarter of them are held
 * @param rounds timed scans per scanner (shmguard, floor, fuser, lsof), interleaved
 * @param scan whether to run the scan comparison
 * @param scaling whether to run the 3 x 3 grid of processes x segments
 * @param daemon whether to run the daemon measurements
 * @param idleSeconds how long the idle footprint is measured
 * @param kills SIGKILLs of last holders for the reap delay
 * @param burst segment files created at once for the burst
 * @param threadedEvery every threadedEvery-th holder of a fixture also has three threads, one of
 *     them with an fd table of its own (0: no threads)
 * @param reap whether to time reaps against the unlink and lease floors
 * @param reapFiles leaked files reaped in each timed round of the reap measurement
 * @param baselineJar another build's jar whose scan and reaps are timed beside this build's (the
 *     cost of a change in one run), or null
 */
record BenchParams(Path basedir, Path jar, Path out, int processes, int segments, int rounds, boolean scan, boolean scaling,
    boolean daemon, int idleSeconds, int kills, int burst, int threadedEvery, boolean reap, int reapFiles, Path baselineJar) {

  BenchParams {
    if (processes < 1 || segments < 4 || rounds < 3 || idleSeconds < 1 || kills < 1 || burst < 1 || threadedEvery < 0
        || reapFiles < 1) {
      throw new IllegalArgumentException("bench parameters out of range: processes >= 1, segments >= 4, rounds >= 3,"
          + " idleSeconds >= 1, kills >= 1, burst >= 1, threadedEvery >= 0, reapFiles >= 1");
    }
  }

  static BenchParams fromSystemProperties() {
    return new BenchParams(
        Path.of(System.getProperty("bench.basedir", ".")),
        Path.of(System.getProperty("bench.jar", "target/shmguard.jar")),
        Path.of(System.getProperty("bench.out", "target/bench")),
        Integer.getInteger("bench.processes", 400),
        Integer.getInteger("bench.segments", 4000),
        Integer.getInteger("bench.rounds", 21),
        Boolean.parseBoolean(System.getProperty("bench.scan", "true")),
        Boolean.parseBoolean(System.getProperty("bench.scaling", "true")),
        Boolean.parseBoolean(System.getProperty("bench.daemon", "true")),
        Integer.getInteger("bench.idleSeconds", 60),
        Integer.getInteger("bench.kills", 200),
        Integer.getInteger("bench.burst", 20000),
        Integer.getInteger("bench.threadedEvery", 4),
        Boolean.parseBoolean(System.getProperty("bench.reap", "true")),
        Integer.getInteger("bench.reapFiles", 1000),
        System.getProperty("bench.baselineJar", "").isBlank() ? null : Path.of(System.getProperty("bench.baselineJar")));
  }

  /** The segment files held in a fixture of {@code segments}: a quarter. */
  static int heldOf(int segments) {
    return segments / 4;
  }
}
