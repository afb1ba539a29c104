package org.shmguard.advice;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One request line of the advice protocol, version 1: a verb, "v1", then {@code key=value} words.
 * PING takes nothing; CHECK (the daemon's health verdict on its last pass) takes no keys; SCAN
 * (its last pass as {@code shmguard scan} prints it) takes {@code format=text|json} and is root's;
 * RELOAD (root's: {@code systemctl reload}'s ExecReload) reads the configuration again and answers
 * with the verdict, an error when the new one is rejected.
 *
 * <pre>{@code
 * Request r = Request.parse("ADVISE v1 ranks=4 nccl=2.21.5 dev=0:25 format=env");
 * }</pre>
 */
public record Request(Verb verb, Map<String, String> args) {
  public static final String VERSION = "v1";

  /** What a client may ask, and which keys each verb accepts. */
  public enum Verb {
    PING(Set.of()),
    ADVISE(Set.of("ranks", "nccl", "dev", "format", "nodes", "p2p", "procs", "numa")),
    CHECK(Set.of()),
    SCAN(Set.of("format")),
    REMOUNT(Set.of("dev", "size")),
    CLEAN(Set.of("dry-run")),
    PREPARE(Set.of("container", "pid", "gpus", "root")),
    RELOAD(Set.of());

    private final Set<String> keys;

    Verb(Set<String> keys) {
      this.keys = keys;
    }

    /** True for verbs that change the host: only root may ask them. */
    public boolean changesHost() {
      return this == REMOUNT || this == CLEAN || this == PREPARE || this == RELOAD;
    }

    /**
     * True for verbs only root may ask: those that change the host, and SCAN, whose answer names
     * every user's processes, commands and files (more than an ordinary user's own scan can read).
     */
    public boolean rootOnly() {
      return changesHost() || this == SCAN;
    }
  }

  public Request {
    args = Map.copyOf(args);
  }

  /** Parses one line; throws {@link ProtocolException} ("bad-request") saying what is wrong. */
  public static Request parse(String line) throws ProtocolException {
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new ProtocolException(ProtocolException.BAD_REQUEST, "the request must be printable ASCII");
      }
    }
    List<String> words = List.of(line.trim().split(" +"));
    if (words.isEmpty() || words.get(0).isEmpty()) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "empty request; send PING, CHECK v1 or ADVISE v1 [ranks=N] [nccl=V] [dev=MAJ:MIN] [format=env|json] [nodes=N] [p2p=yes|no] [procs=N] [numa=yes|no]");
    }
    Verb verb;
    try {
      verb = Verb.valueOf(words.get(0));
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "unknown request \"" + clip(words.get(0))
          + "\"; known: PING, ADVISE, CHECK, SCAN, REMOUNT, CLEAN, PREPARE, RELOAD");
    }
    if (verb == Verb.PING) {
      return new Request(verb, Map.of());
    }
    if (words.size() < 2 || !words.get(1).equals(VERSION)) {
      throw new ProtocolException(ProtocolException.UNSUPPORTED_VERSION, verb + " needs the protocol version right after it: "
          + verb + " " + VERSION + " ...");
    }
    Map<String, String> args = new LinkedHashMap<>();
    for (String word : words.subList(2, words.size())) {
      int eq = word.indexOf('=');
      if (eq <= 0) {
        throw new ProtocolException(ProtocolException.BAD_REQUEST, "\"" + clip(word) + "\" is not key=value");
      }
      String key = word.substring(0, eq);
      if (!verb.keys.contains(key)) {
        throw new ProtocolException(ProtocolException.BAD_REQUEST, verb + " takes no \"" + clip(key) + "\"; it takes "
            + String.join(", ", new java.util.TreeSet<>(verb.keys)));
      }
      if (args.put(key, word.substring(eq + 1)) != null) {
        throw new ProtocolException(ProtocolException.BAD_REQUEST, "\"" + key + "\" is given twice");
      }
    }
    return new Request(verb, args);
  }

  public String arg(String key) {
    return args.get(key);
  }

  static String clip(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "...";
  }
}
