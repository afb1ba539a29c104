package org.shmguard.config;

/**
 * A configuration that cannot be used: says where (file and line), which key, and what is allowed.
 * shmguard exits with status 78 (EX_CONFIG) on it.
 */
public final class ConfigException extends Exception {
  private final String source;
  private final int line;
  private final String key;

  public ConfigException(String source, int line, String key, String message) {
    super(message);
    this.source = source;
    this.line = line;
    this.key = key;
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
