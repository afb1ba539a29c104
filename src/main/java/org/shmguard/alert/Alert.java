package org.shmguard.alert;

import java.util.ArrayList;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One event for operators: its kind, a one-line message, and structured fields (SHM_MOUNT,
 * SHM_SEGMENT, ...). A field may repeat, as journald allows: one SHM_HOLDER_PID per holder. Its
 * syslog priority is its kind's unless it was lowered ({@link #atMost}): an event about a mount
 * that counts as its owner's, not the node's, never pages.
 *
 * <pre>{@code
 * Alert a = Alert.of(EventKind.SEGMENT_REAPED, "reaped /dev/shm/nccl-abc123")
 *     .with("SHM_MOUNT", "/dev/shm").with("SHM_BYTES", 9637892);
 * }</pre>
 */
public record Alert(EventKind kind, String message, List<Map.Entry<String, String>> fields, int priority) {
  public Alert {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(message, "message");
    if (priority < 0 || priority > 7) {
      throw new IllegalArgumentException("priority must be a syslog priority, 0 to 7: " + priority);
    }
    message = oneLine(message);
    fields = List.copyOf(fields);
  }

  /**
   * The text with every line break and other control character shown escaped (\n, \x1b): a
   * message is one line in the journal and on a terminal, whatever an error text or a file name
   * quoted in it holds.
   */
  public static String oneLine(String text) {
    StringBuilder sb = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c)) {
        if (sb == null) {
          sb = new StringBuilder(text.length() + 8).append(text, 0, i);
        }
        sb.append(c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : String.format("\\x%02x", (int) c));
      } else if (sb != null) {
        sb.append(c);
      }
    }
    return sb == null ? text : sb.toString();
  }

  public static Alert of(EventKind kind, String message) {
    return new Alert(kind, message, List.of(), kind.priority());
  }

  /** This alert with one more field; a null value adds nothing (an unknown container, say). */
  public Alert with(String name, Object value) {
    if (value == null) {
      return this;
    }
    List<Map.Entry<String, String>> more = new ArrayList<>(fields);
    more.add(new SimpleImmutableEntry<>(name, String.valueOf(value)));
    return new Alert(kind, message, more, priority);
  }

  /**
   * This alert at {@code priority} or a less urgent one (a larger number): an event about what an
   * ordinary user owns is never more than a notice, whatever its kind says.
   */
  public Alert atMost(int priority) {
    return priority <= this.priority ? this : new Alert(kind, message, fields, priority);
  }

  /** The first value of {@code name}, or null. */
  public String field(String name) {
    for (Map.Entry<String, String> f : fields) {
      if (f.getKey().equals(name)) {
        return f.getValue();
      }
    }
    return null;
  }

  /** Every field a journal entry carries: ours plus MESSAGE, MESSAGE_ID, PRIORITY and SHMGUARD_EVENT. */
  public List<Map.Entry<String, String>> journalFields() {
    List<Map.Entry<String, String>> all = new ArrayList<>();
    all.add(new SimpleImmutableEntry<>("MESSAGE", message));
    all.add(new SimpleImmutableEntry<>("MESSAGE_ID", kind.messageId()));
    all.add(new SimpleImmutableEntry<>("PRIORITY", Integer.toString(priority)));
    all.add(new SimpleImmutableEntry<>("SYSLOG_IDENTIFIER", "shmguard"));
    all.add(new SimpleImmutableEntry<>("SHMGUARD_EVENT", kind.label()));
    all.addAll(fields);
    return all;
  }
}
