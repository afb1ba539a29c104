package org.shmguard.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A configuration that cannot be used: says where (file and line), which key, and what is allowed.
 * shmguard exits with status 78 (EX_CONFIG) on it. One exception may carry every error a file has
 * ({@link #all}), so that an operator fixes them in one edit, not one per run.
 */
public final class ConfigException extends Exception {
  private final String source;
  private final int line;
  private final String key;
  /** Every error, this one first; just this one for a single error. */
  private final List<ConfigException> errors;

  public ConfigException(String source, int line, String key, String message) {
    super(message);
    this.source = source;
    this.line = line;
    this.key = key;
    this.errors = List.of(this);
  }

  private ConfigException(List<ConfigException> errors) {
    super(errors.get(0).getMessage());
    ConfigException first = errors.get(0);
    this.source = first.source;
    this.line = first.line;
    this.key = first.key;
    this.errors = List.copyOf(errors);
  }

  /**
   * One exception for several errors, in the order of their lines (the first one's place and
   * message are this one's); the error itself when there is one.
   */
  public static ConfigException all(List<ConfigException> errors) {
    if (errors.isEmpty()) {
      throw new IllegalArgumentException("no configuration errors to report");
    }
    List<ConfigException> flat = new ArrayList<>();
    errors.forEach(e -> flat.addAll(e.errors));
    if (flat.size() == 1) {
      return flat.get(0);
    }
    flat.sort(Comparator.comparingInt(ConfigException::line));
    return new ConfigException(flat);
  }

  /**
   * One exception for the errors of several files, each file's in the order of its lines and the
   * files in the order they were read (the main file, then its drop-ins).
   */
  public static ConfigException inFileOrder(List<ConfigException> perFile) {
    List<ConfigException> flat = new ArrayList<>();
    perFile.forEach(e -> flat.addAll(e.errors));
    return flat.size() == 1 ? flat.get(0) : new ConfigException(flat);
  }

  /** Each error this exception reports, in the order of their lines. */
  public List<ConfigException> errors() {
    return errors;
  }

  /** Every error, one "file:line: key: message" line each: what the command line prints. */
  public List<String> lines() {
    return errors.stream().map(ConfigException::formatOne).toList();
  }

  public String source() {
    return source;
  }

  /** 1-based line, or 0 when the problem is not on a line. */
  public int line() {
    return line;
  }

  /** The dotted key, or null when the problem is not with one key. */
  public String key() {
    return key;
  }

  /**
   * "file:line: key: message", the form editors and people both read. Always one line: a key or
   * value quoted from the file may hold a newline or another control character, which is shown
   * escaped (\n, \x1b) so that it can neither split the message nor reach a terminal raw.
   */
  public String format() {
    String first = formatOne();
    return errors.size() == 1 ? first : first + " (and " + (errors.size() - 1) + " more)";
  }

  private String formatOne() {
    StringBuilder sb = new StringBuilder(source);
    if (line > 0) {
      sb.append(':').append(line);
    }
    sb.append(": ");
    if (key != null) {
      sb.append(key).append(": ");
    }
    return escapeControls(sb.append(getMessage()).toString());
  }

  private static String escapeControls(String text) {
    StringBuilder sb = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n') {
        sb.append("\\n");
      } else if (c == '\t') {
        sb.append("\\t");
      } else if (Character.isISOControl(c)) {
        sb.append(String.format("\\x%02x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return format();
  }
}
