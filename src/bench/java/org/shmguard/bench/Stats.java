package org.shmguard.bench;

import java.util.Arrays;
import java.util.List;

/**
 * Order statistics of a sample of durations: median, percentiles and spread, by the nearest-rank
 * method, so that every figure reported is one that was actually measured.
 *
 * <pre>{@code
 * Stats s = Stats.ofNanos(samples);
 * s.median(); s.percentile(99); s.min(); s.max();   // milliseconds
 * }</pre>
 */
record Stats(double[] sortedMs) {
  Stats {
    if (sortedMs.length == 0) {
      throw new IllegalArgumentException("sortedMs: no samples");
    }
    sortedMs = sortedMs.clone();
    Arrays.sort(sortedMs);
  }

  static Stats ofNanos(List<Long> nanos) {
    return new Stats(nanos.stream().mapToDouble(n -> n / 1e6).toArray());
  }

  static Stats ofMillis(List<Double> ms) {
    return new Stats(ms.stream().mapToDouble(Double::doubleValue).toArray());
  }

  int count() {
    return sortedMs.length;
  }

  /** The p-th percentile by nearest rank: the smallest sample with at least p% at or below it. */
  double percentile(double p) {
    int rank = (int) Math.ceil(p / 100.0 * sortedMs.length);
    return sortedMs[Math.max(0, Math.min(sortedMs.length - 1, rank - 1))];
  }

  double median() {
    return percentile(50);
  }

  double min() {
    return sortedMs[0];
  }

  double max() {
    return sortedMs[sortedMs.length - 1];
  }
}
