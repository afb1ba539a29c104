package org.shmguard.testing;

import java.util.Arrays;

/**
 * Reads one sample out of a Prometheus text exposition (the metrics page, or the node_exporter
 * textfile), as a scraper would: the line of {@code name} whose labels contain every fragment.
 *
 * <pre>{@code
 * double reaped = Exposition.sample(body, "shmguard_reaps_total", "result=\"reaped\"");
 * boolean there = Exposition.has(body, "shmguard_alerts_total", "kind=\"metrics_unavailable\"");
 * }</pre>
 */
public final class Exposition {
  private Exposition() {}

  /** The value of the one sample that matches; an AssertionError naming the page if none or several do. */
  public static double sample(String exposition, String name, String... labelFragments) {
    return exposition.lines()
        .filter(l -> matches(l, name, labelFragments))
        .map(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .reduce((a, b) -> {
          throw new AssertionError("more than one sample of " + name + " matches");
        })
        .orElseThrow(() -> new AssertionError("no sample of " + name + " with " + String.join(", ", labelFragments)
            + " in:\n" + exposition));
  }

  /** Whether a sample of {@code name} with every fragment is on the page. */
  public static boolean has(String exposition, String name, String... labelFragments) {
    return exposition.lines().anyMatch(l -> matches(l, name, labelFragments));
  }

  private static boolean matches(String line, String name, String... labelFragments) {
    return (line.startsWith(name + "{") || line.startsWith(name + " "))
        && Arrays.stream(labelFragments).allMatch(line::contains);
  }
}
