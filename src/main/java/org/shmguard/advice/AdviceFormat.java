package org.shmguard.advice;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.shmguard.policy.Advice;

/**
 * Advice as text: KEY=VALUE lines a shell reads one by one (never evaluates), or one JSON
 * document. Both carry the action, the reason, the numbers and the variables to set.
 */
public final class AdviceFormat {
  private static final ObjectMapper JSON = new ObjectMapper();

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

  /** One JSON object: version, action, mount, env, reason, numbers, assumptions. */
  public static String json(Advice a) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("version", 1);
    doc.put("action", a.action().label());
    doc.put("mount", Map.of("name", a.mount().name(), "dev", a.mount().dev()));
    doc.put("env", a.env());
    doc.put("reason", a.reason());
    doc.put("numbers", a.numbers());
    doc.put("assumptions", a.assumptions());
    try {
      return JSON.writeValueAsString(doc) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write advice as JSON", e);
    }
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
