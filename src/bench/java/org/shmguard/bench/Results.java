package org.shmguard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The bench's figures under dotted names ({@code scan.ratioFloor}), written as nested JSON to
 * target/bench/results.json and printed as a table with each target and whether it was met.
 */
final class Results {
  /** A target for one figure: met when the figure is at most (or, for atLeast, at least) the limit. */
  record Target(String key, double limit, boolean atMost, String text) {
    Boolean met(Object value) {
      if (!(value instanceof Number n) || Double.isNaN(n.doubleValue())) {
        return null;
      }
      return atMost ? n.doubleValue() <= limit : n.doubleValue() >= limit;
    }
  }

  private final Map<String, Object> values = new LinkedHashMap<>();
  private final Map<String, String> notes = new LinkedHashMap<>();
  private final List<Target> targets = new ArrayList<>();

  void put(String key, Object value) {
    if (value instanceof Double d) {
      value = Double.isNaN(d) ? null : Math.round(d * 1000.0) / 1000.0;
    }
    values.put(key, value);
  }

  /** A figure that could not be measured: null, with the reason beside it. */
  void missing(String key, String why) {
    values.put(key, null);
    notes.put(key, why);
  }

  void note(String key, String text) {
    notes.put(key, text);
  }

  Object get(String key) {
    return values.get(key);
  }

  void target(String key, double limit, boolean atMost, String text) {
    targets.add(new Target(key, limit, atMost, text));
  }

  void write(Path file) throws IOException {
    Map<String, Object> root = new LinkedHashMap<>();
    values.forEach((k, v) -> nest(root, k, v));
    Map<String, Object> targetView = new LinkedHashMap<>();
    for (Target t : targets) {
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("target", t.text());
      one.put("value", values.get(t.key()));
      one.put("met", t.met(values.get(t.key())));
      targetView.put(t.key(), one);
    }
    root.put("targets", targetView);
    root.put("notes", notes);
    Files.createDirectories(file.getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), root);
  }

  @SuppressWarnings("unchecked")
  private static void nest(Map<String, Object> root, String key, Object value) {
    String[] parts = key.split("\\.");
    Map<String, Object> at = root;
    for (int i = 0; i < parts.length - 1; i++) {
      at = (Map<String, Object>) at.computeIfAbsent(parts[i], k -> new LinkedHashMap<String, Object>());
    }
    at.put(parts[parts.length - 1], value);
  }

  void print(PrintStream out) {
    int w = values.keySet().stream().mapToInt(String::length).max().orElse(10);
    out.println();
    out.println("shmguard bench results");
    for (Map.Entry<String, Object> e : values.entrySet()) {
      out.printf(Locale.ROOT, "  %-" + w + "s  %s%n", e.getKey(), e.getValue());
    }
    out.println();
    out.println("targets");
    for (Target t : targets) {
      Boolean met = t.met(values.get(t.key()));
      out.printf(Locale.ROOT, "  %-" + w + "s  %-12s %-28s %s%n", t.key(), values.get(t.key()), t.text(),
          met == null ? "NOT MEASURED" : met ? "met" : "NOT MET");
    }
    if (!notes.isEmpty()) {
      out.println();
      out.println("notes");
      notes.forEach((k, v) -> out.printf(Locale.ROOT, "  %s: %s%n", k, v));
    }
  }
}
