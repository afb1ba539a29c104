package org.shmguard.config;

import java.nio.charset.StandardCharsets;

/**
 * The kinds of path configuration keys take. Root writes to and watches these paths, so each
 * must be absolute and in its plain form: what the file says is exactly the path used.
 */
final class PathTypes {
  static final String PLAIN_PATH = "an absolute path without . or .. parts, // or a trailing /";
  /** The bytes of path a Unix socket may have when the JDK binds it (sizeof sun_path, 108, less 2). */
  static final int MAX_SOCKET_PATH_BYTES = 106;
  /** PATH_MAX (4096) less the closing NUL, and NAME_MAX. */
  private static final int MAX_PATH_BYTES = 4095;
  private static final int MAX_NAME_BYTES = 255;

  private PathTypes() {}

  static ValueType<String> absolutePath() {
    return Types.scalar(PLAIN_PATH, text -> requirePlain(text, false));
  }

  /** "" (off) or an absolute path in its plain form. */
  static ValueType<String> optionalPath() {
    return Types.scalar(PLAIN_PATH + ", or \"\" to leave it out", text -> text.isEmpty() ? text : requirePlain(text, false));
  }

  /**
   * A path a Unix socket is bound to: a socket address holds 108 bytes of path (sun_path, unix(7))
   * with its closing NUL, and the JDK, which binds and connects shmguard's socket, keeps 2 of them
   * back: a longer path would fail only when the daemon starts listening.
   */
  static ValueType<String> socketPath() {
    return Types.scalar(PLAIN_PATH + ", at most " + MAX_SOCKET_PATH_BYTES
        + " bytes long (a Unix socket's address holds 108 bytes, sun_path, and the JDK keeps 2 of them back)", text -> {
      requirePlain(text, false);
      int bytes = text.getBytes(StandardCharsets.UTF_8).length;
      if (bytes > MAX_SOCKET_PATH_BYTES) {
        throw new IllegalArgumentException("the path is " + bytes + " bytes long, too long for a Unix socket");
      }
      return text;
    });
  }

  /**
   * "" (off) or the path of a node_exporter textfile: its textfile collector reads only files
   * named *.prom, so any other name would be written and never collected.
   */
  static ValueType<String> optionalTextfile() {
    return Types.scalar(PLAIN_PATH + ", ending in .prom (node_exporter's textfile collector reads only *.prom), or \"\" to turn it off",
        text -> {
          if (text.isEmpty()) {
            return text;
          }
          requirePlain(text, false);
          if (!text.endsWith(".prom") || text.endsWith("/.prom")) {
            throw new IllegalArgumentException("\"" + text + "\" does not end in .prom");
          }
          return text;
        });
  }

  /**
   * {@code text} if it is an absolute path in its plain form: root writes to and watches these
   * paths, so what the file says must be exactly the path used (no "..", which a later change of
   * a link or directory could send elsewhere, and no character a path cannot hold).
   */
  static String requirePlain(String text, boolean rootAllowed) {
    if (!text.startsWith("/")) {
      throw new IllegalArgumentException("\"" + text + "\" is not an absolute path");
    }
    for (int i = 0; i < text.length(); i++) {
      if (Character.isISOControl(text.charAt(i))) {
        throw new IllegalArgumentException("the path holds a control character (" + String.format("0x%02x", (int) text.charAt(i)) + ")");
      }
    }
    if (text.equals("/")) {
      if (rootAllowed) {
        return text;
      }
      throw new IllegalArgumentException("\"/\" is a directory");
    }
    if (text.endsWith("/")) {
      throw new IllegalArgumentException("\"" + text + "\" ends in /");
    }
    if (text.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
      throw new IllegalArgumentException("the path is longer than " + MAX_PATH_BYTES + " bytes (PATH_MAX)");
    }
    for (String part : text.substring(1).split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        throw new IllegalArgumentException("\"" + text + "\" has a " + (part.isEmpty() ? "//" : "\"" + part + "\"") + " part");
      }
      if (part.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
        throw new IllegalArgumentException("a part of the path is longer than " + MAX_NAME_BYTES + " bytes (NAME_MAX)");
      }
    }
    return text;
  }
}
