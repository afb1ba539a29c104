package org.shmguard.advice;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.shmguard.policy.Advice;

/**
 * Advice as text: KEY=VALUE lines a shell reads one by one (never evaluates), or one JSON
 * document. Both carry the action, the reason, the numbers and the variables to set.
 */
public final class AdviceFormat {
  private AdviceFormat() {}

  /**
   * Lines such as {@code NCCL_SHM_DISABLE=1}, {@code SHMGUARD_ADVICE=shm-disable},
   * {@code SHMGUARD_REASON=...}, {@code SHMGUARD_FREE_BYTES=67108864}: the variables to set come
   * first, then the SHMGUARD_ facts. Values are single lines, printable, unquoted.
   */
  public static String env(Advice a) {
    StringBuilder sb = new StringBuilder();
    a.env().forEach((k, v) -> line(sb, k, v));
    line(sb, "SHMGUARD_ADVICE", a.action().label());
    line(sb, "SHMGUARD_MOUNT", a.mount().name());
    line(sb, "SHMGUARD_DEV", a.mount().dev());
    line(sb, "SHMGUARD_REASON", a.reason());
    a.numbers().forEach((k, v) -> line(sb, "SHMGUARD_" + snake(k), Long.toString(v)));
    line(sb, "SHMGUARD_ASSUMES", String.join("; ", a.assumptions()));
    return sb.toString();
  }

  /** One JSON object on one line: version, action, mount, env, reason, numbers, assumptions. */
  public static String json(Advice a) {
    StringBuilder sb = new StringBuilder("{\"version\":1,\"action\":");
    string(sb, a.action().label());
    sb.append(",\"mount\":{\"name\":");
    string(sb, a.mount().name());
    sb.append(",\"dev\":");
    string(sb, a.mount().dev());
    sb.append("},\"env\":");
    object(sb, a.env());
    sb.append(",\"reason\":");
    string(sb, a.reason());
    sb.append(",\"numbers\":");
    object(sb, a.numbers());
    sb.append(",\"assumptions\":");
    array(sb, a.assumptions());
    return sb.append("}\n").toString();
  }

  private static void object(StringBuilder sb, Map<String, ?> map) {
    sb.append('{');
    String sep = "";
    for (Map.Entry<String, ?> e : map.entrySet()) {
      sb.append(sep);
      string(sb, e.getKey());
      sb.append(':');
      if (e.getValue() instanceof Number n) {
        sb.append(n);
      } else {
        string(sb, String.valueOf(e.getValue()));
      }
      sep = ",";
    }
    sb.append('}');
  }

  private static void array(StringBuilder sb, List<String> items) {
    sb.append('[');
    String sep = "";
    for (String item : items) {
      sb.append(sep);
      string(sb, item);
      sep = ",";
    }
    sb.append(']');
  }

  /** A JSON string (RFC 8259): quote, backslash and control characters escaped, everything else as is. */
  static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04X", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  private static void line(StringBuilder sb, String key, String value) {
    sb.append(key).append('=').append(printable(value)).append('\n');
  }

  /** Control characters would break the one-line-per-variable framing: they become '?'. */
  static String printable(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    s.codePoints().forEach(c -> sb.appendCodePoint(c < 0x20 || c == 0x7f ? '?' : c));
    return sb.toString();
  }

  /** "freeBytes" -> "FREE_BYTES". */
  static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
  }
}
