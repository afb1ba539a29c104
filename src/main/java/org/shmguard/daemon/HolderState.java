package org.shmguard.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.shmguard.host.HostPaths;
import org.shmguard.host.KeptFile;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.nativ.SmallFiles;
import org.shmguard.policy.Counts;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.RememberedHolders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder history kept across a restart or an upgrade: {@code holders.json} in the state
 * directory (systemd's {@code StateDirectory=shmguard}, /var/lib/shmguard). Written after each
 * pass whose history changed, on a thread of its own, as every file root makes ({@link KeptFile}:
 * a root-owned directory handle, an exclusive temporary file, mode 0600, renamed over the name);
 * read once at start through the same kind of handle, without following a link or waiting on a
 * FIFO. The file names the boot and the PID namespace it was written in and ends with a SHA-256
 * of its text: a file from another boot, another PID namespace, another format, or one that is
 * truncated, edited, too large, not root's or writable by others is ignored with a warning, and
 * every file then waits out its grace as on a first start. Nothing in it is trusted beyond what
 * {@link RememberedHolders#admit} checks against the host.
 *
 * <pre>{@code
 * HolderState state = HolderState.at(Path.of("/var/lib/shmguard"), HostPaths.system());
 * engine.remember(state.load());
 * state.keep(pass.judgement().snapshot(), engine.history());   // after each pass
 * }</pre>
 */
final class HolderState implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HolderState.class);
  static final String FILE = "holders.json";
  static final String FORMAT = "shmguard-holders/1";
  /** The most the file may take: a bound on what start reads, whatever the file says. */
  static final int MAX_BYTES = 8 << 20;
  private static final int MAX_TEXT = 256;
  private static final String SUM = "\nsha256:";
  private static final ObjectMapper JSON = new ObjectMapper();
  /** None: no state directory was given, nothing is kept. */
  static final HolderState NONE = new HolderState(null, null, null, null);

  private final Path dir;
  private final String bootId;
  private final String pidNamespace;
  private final KeptFile file;

  private HolderState(Path dir, String bootId, String pidNamespace, KeptFile file) {
    this.dir = dir;
    this.bootId = bootId;
    this.pidNamespace = pidNamespace;
    this.file = file;
  }

  /**
   * The history kept in {@code dir} (null: none), for the boot and PID namespace that
   * {@code paths}' /proc shows. Without a boot id to tell this boot from the next, nothing is kept.
   */
  static HolderState at(Path dir, HostPaths paths) {
    if (dir == null) {
      LOG.info("no state directory (--state-dir, or systemd's StateDirectory=): the holder history is not kept across"
          + " a restart");
      return NONE;
    }
    try {
      String boot = Files.readString(paths.proc("sys", "kernel", "random", "boot_id")).strip();
      String pidNs = Files.readSymbolicLink(paths.proc("self", "ns", "pid")).toString();
      return new HolderState(dir.toAbsolutePath(), boot, pidNs,
          KeptFile.start(dir.toAbsolutePath().resolve(FILE), 0600, true, "the holder history"));
    } catch (IOException | RuntimeException e) {
      LOG.warn("cannot tell this boot and PID namespace ({}): the holder history is not kept across a restart", e.toString());
      return NONE;
    }
  }

  /** The path of the file, or null when nothing is kept. */
  Path path() {
    return file == null ? null : file.path();
  }

  /** What the daemon before this one remembered; none (with a warning saying why) when the file cannot be trusted. */
  RememberedHolders load() {
    if (file == null) {
      return RememberedHolders.none();
    }
    byte[] bytes;
    try (RootDirectory d = RootDirectory.open(dir, false)) {
      SmallFiles.Contents c = d.readFile(FILE, MAX_BYTES);
      if (c.ownerUid() != SmallFiles.effectiveUid() || (c.permissions() & 022) != 0) {
        return ignored("owned by uid " + c.ownerUid() + " with mode " + String.format("%04o", c.permissions())
            + "; only a file of shmguard's own user that no one else can write is read");
      }
      if (c.bytes().length > MAX_BYTES) {
        return ignored("larger than " + MAX_BYTES + " bytes");
      }
      bytes = c.bytes();
    } catch (NoSuchFileException e) {
      LOG.info("no holder history in {} (a first start, or the last one kept none)", dir);
      return RememberedHolders.none();
    } catch (IOException e) {
      return ignored(e.getMessage());
    }
    try {
      RememberedHolders r = decode(bytes);
      LOG.info("holder history from before the restart: {} with {}, from {}", Counts.of(r.entries().size(), "segment"),
          Counts.of(r.entries().stream().mapToInt(e -> e.holders().size()).sum(), "holder"), file.path());
      return r;
    } catch (Foreign e) {
      LOG.info("the holder history {} is not this one's ({}); starting without it", file.path(), e.getMessage());
      return RememberedHolders.none();
    } catch (IllegalArgumentException | IOException e) {
      return ignored(e.getMessage());
    }
  }

  private RememberedHolders ignored(String why) {
    LOG.warn("ignoring the holder history {}: {}; segments seen held before the restart wait out their grace", file.path(), why);
    return RememberedHolders.none();
  }

  /** Keeps what {@code history} knows of {@code snap}'s segments; the file is written on its own thread. */
  void keep(Snapshot snap, HolderHistory history) {
    if (file != null) {
      file.replace(() -> encode(RememberedHolders.from(snap, history, RememberedHolders.MAX_HOLDERS)));
    }
  }

  /** Waits a moment for the last write, so that a stop keeps the newest history. */
  @Override
  public void close() {
    if (file != null && !file.closeWithin(Duration.ofSeconds(2))) {
      LOG.warn("the holder history {} was not written within 2 s of the stop; the one before is kept", file.path());
    }
  }

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
  private static final class Foreign extends IllegalArgumentException {
    Foreign(String why) {
      super(why);
    }
  }
}
