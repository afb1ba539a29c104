package org.shmguard.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.RememberedHolders;

/**
 * The text of {@code holders.json}: one JSON object (format, the boot id, the PID namespace, each
 * remembered segment with its holders) and a last line {@code sha256:<hex>} over it. Decoding
 * checks every field and refuses anything but a file this format writes for this boot and this
 * PID namespace; {@link HolderState} reads and writes the file.
 *
 * <pre>{@code
 * HolderStateFormat f = new HolderStateFormat(bootId, "pid:[4026531836]");
 * RememberedHolders r = f.decode(f.encode(kept));
 * }</pre>
 */
final class HolderStateFormat {
  static final String FORMAT = "shmguard-holders/1";
  /** The most the file may take: a bound on what start reads, whatever the file says. */
  static final int MAX_BYTES = 8 << 20;
  private static final int MAX_TEXT = 256;
  private static final String SUM = "\nsha256:";
  private static final ObjectMapper JSON = new ObjectMapper();
  private final String bootId;
  private final String pidNamespace;

  HolderStateFormat(String bootId, String pidNamespace) {
    this.bootId = bootId;
    this.pidNamespace = pidNamespace;
  }

  /** The file's bytes: at most {@link #MAX_BYTES}, the entries beyond left out (halved until it fits). */
  byte[] encode(RememberedHolders r) {
    List<RememberedHolders.Entry> entries = r.entries();
    byte[] text = encode(entries);
    while (text.length > MAX_BYTES && !entries.isEmpty()) {
      entries = entries.subList(0, entries.size() / 2);
      text = encode(entries);
    }
    return text;
  }

  private byte[] encode(List<RememberedHolders.Entry> entries) {
    ObjectNode root = JSON.createObjectNode();
    root.put("format", FORMAT);
    root.put("bootId", bootId);
    root.put("pidNamespace", pidNamespace);
    ArrayNode list = root.putArray("segments");
    for (RememberedHolders.Entry e : entries) {
      ObjectNode s = list.addObject();
      s.put("dev", e.mountDev().toString());
      s.put("mountId", e.mountId());
      s.put("ino", e.ino());
      s.put("name", HexFormat.of().formatHex(e.name()));
      s.put("lastChangeNanos", e.lastChangeNanos());
      ArrayNode hs = s.putArray("holders");
      for (ProcessInfo p : e.holders()) {
        ObjectNode h = hs.addObject();
        h.put("pid", p.pid());
        h.put("startTicks", p.startTicks());
        h.put("command", cut(p.command()));
        h.put("uid", p.uid());
        h.put("user", cut(p.user()));
        h.put("container", cut(p.container()));
      }
    }
    String body;
    try {
      body = JSON.writeValueAsString(root);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return (body + SUM + sha256(body) + "\n").getBytes(StandardCharsets.UTF_8);
  }

  /**
   * What {@code bytes} remember; {@link Foreign} for a sound file of another boot, and
   * IllegalArgumentException (or IOException for JSON that does not parse) saying what is wrong
   * for anything else that is not exactly what {@link #encode} writes for this boot and namespace.
   */
  RememberedHolders decode(byte[] bytes) throws IOException {
    String text = new String(bytes, StandardCharsets.UTF_8);
    int at = text.lastIndexOf(SUM);
    if (at < 0 || !text.endsWith("\n")) {
      throw new IllegalArgumentException("no checksum at its end (a write cut short?)");
    }
    String body = text.substring(0, at);
    if (!sha256(body).equals(text.substring(at + SUM.length(), text.length() - 1))) {
      throw new IllegalArgumentException("its checksum does not match its content (changed since shmguard wrote it)");
    }
    JsonNode root = JSON.readTree(body);
    if (!FORMAT.equals(root.path("format").asText(null))) {
      throw new IllegalArgumentException("format \"" + root.path("format").asText("") + "\", not " + FORMAT);
    }
    if (!bootId.equals(root.path("bootId").asText(null))) {
      throw new Foreign("written before the last reboot: every process and tmpfs it names is gone");
    }
    if (!pidNamespace.equals(root.path("pidNamespace").asText(null))) {
      throw new IllegalArgumentException("written in PID namespace " + root.path("pidNamespace").asText("?") + ", not "
          + pidNamespace + ": its pids name other processes here");
    }
    JsonNode segments = root.path("segments");
    if (!segments.isArray()) {
      throw new IllegalArgumentException("no list of segments");
    }
    List<RememberedHolders.Entry> entries = new ArrayList<>();
    for (JsonNode s : segments) {
      List<ProcessInfo> holders = new ArrayList<>();
      JsonNode hs = s.path("holders");
      if (!hs.isArray()) {
        throw new IllegalArgumentException("a segment without holders");
      }
      for (JsonNode h : hs) {
        holders.add(new ProcessInfo(integer(h, "pid"), text(h, "command"), integer(h, "uid"), text(h, "user"),
            text(h, "container"), number(h, "startTicks")));
      }
      entries.add(new RememberedHolders.Entry(Dev.parseDecimal(s.path("dev").asText("")), number(s, "mountId"),
          number(s, "ino"), HexFormat.of().parseHex(s.path("name").asText("")), number(s, "lastChangeNanos"), holders));
    }
    return RememberedHolders.of(entries);
  }

  private static long number(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new IllegalArgumentException(field + " is not a whole number");
    }
    return v.asLong();
  }

  private static int integer(JsonNode n, String field) {
    long v = number(n, field);
    if (v != (int) v) {
      throw new IllegalArgumentException(field + " is out of range");
    }
    return (int) v;
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual() || v.asText().length() > MAX_TEXT) {
      throw new IllegalArgumentException(field + " is not a text of at most " + MAX_TEXT + " characters");
    }
    return v.asText();
  }

  private static String cut(String s) {
    return s == null || s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT);
  }

  private static String sha256(String body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A file that is sound but belongs to another boot: not a warning, just nothing to use. */
  static final class Foreign extends IllegalArgumentException {
    Foreign(String why) {
      super(why);
    }
  }
}
