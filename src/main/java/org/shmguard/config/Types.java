package org.shmguard.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.shmguard.text.Durations;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/** The kinds of value configuration keys take. */
final class Types {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final Pattern SIZE = Pattern.compile("(\\d+)([kKmMgGtT]?)(i?[bB]?)");

  private Types() {}

  static ValueType<Boolean> bool() {
    return scalar("true or false", text -> {
      String t = text.toLowerCase(Locale.ROOT);
      if (t.equals("true") || t.equals("false")) {
        return Boolean.valueOf(t);
      }
      throw new IllegalArgumentException("\"" + text + "\" is not a boolean");
    });
  }

  static ValueType<Duration> duration(Duration min, Duration max) {
    String allowed = "a duration from " + Durations.human(min) + " to " + Durations.human(max)
        + ": a whole number with a unit ms, s, m, h or d (such as 500ms, 30s, 2m)";
    return scalar(allowed, text -> {
      Duration d = parseDuration(text);
      if (d == null) {
        throw new IllegalArgumentException("\"" + text + "\" is not a duration");
      }
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(text + " is out of range");
      }
      return d;
    });
  }

  /** A byte count: a whole number with an optional binary suffix k, M, G or T (64M, 2G). */
  static ValueType<Long> size(long min, long max) {
    return scalar("a size such as 64M, 2G or 1073741824 (k, M, G, T are powers of 1024)", text -> {
      Long v = parseSize(text);
      if (v == null) {
        throw new IllegalArgumentException("\"" + text + "\" is not a size");
      }
      if (v < min || v > max) {
        throw new IllegalArgumentException(text + " is out of range");
      }
      return v;
    });
  }

  /** A byte count as {@link #size} takes it, or a whole percentage of the host's memory ("25%"). */
  static ValueType<SizeSpec> sizeOrPercent(long minBytes) {
    return scalar("a size such as 512M or 2G (k, M, G, T are powers of 1024), or a percentage of memory from 1% to 100%", text -> {
      if (text.endsWith("%")) {
        try {
          int pct = Integer.parseInt(text.substring(0, text.length() - 1));
          if (pct < 1 || pct > 100) {
            throw new IllegalArgumentException(text + " is out of range");
          }
          return SizeSpec.ofPercent(pct);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("\"" + text + "\" is not a percentage");
        }
      }
      Long v = parseSize(text);
      if (v == null) {
        throw new IllegalArgumentException("\"" + text + "\" is not a size");
      }
      if (v < minBytes) {
        throw new IllegalArgumentException(text + " is out of range");
      }
      return SizeSpec.ofBytes(v);
    });
  }

  static ValueType<Integer> integer(int min, int max) {
    return scalar("a whole number from " + min + " to " + max, text -> {
      try {
        int v = Integer.parseInt(text);
        if (v < min || v > max) {
          throw new IllegalArgumentException(text + " is out of range");
        }
        return v;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("\"" + text + "\" is not a whole number");
      }
    });
  }

  static ValueType<String> oneOf(String... choices) {
    List<String> list = List.of(choices);
    return scalar("one of " + String.join(", ", list), text -> {
      if (!list.contains(text)) {
        throw new IllegalArgumentException("\"" + text + "\" is not allowed");
      }
      return text;
    });
  }

  /** Any string; {@code emptyAllowed} lets "" turn a feature off. */
  static ValueType<String> string(String allowed) {
    return scalar(allowed, text -> text);
  }

  /** A Quartz cron expression (seconds first: "0 0 * * * ?" is hourly), or "" for never. */
  static ValueType<String> cron() {
    return new ValueType<>() {
      @Override
      public String parse(YamlNode node) {
        String text = node.isNull() ? "" : node.text().trim();
        if (node.isMap() || node.isList()) {
          throw new IllegalArgumentException("a single value is needed here");
        }
        if (!text.isEmpty() && !org.quartz.CronExpression.isValidExpression(text)) {
          throw new IllegalArgumentException("\"" + text + "\" is not a valid cron expression");
        }
        return text;
      }

      @Override
      public String allowed() {
        return "a Quartz cron expression with seconds first, such as \"0 0 * * * ?\" (hourly), or \"\" for never";
      }
    };
  }

  /** "" (off) or host:port, such as 127.0.0.1:9477 or [::1]:9477. */
  static ValueType<String> listenAddress() {
    return scalar("host:port such as 127.0.0.1:9477, or \"\" to turn it off", text -> {
      if (text.isEmpty()) {
        return text;
      }
      int colon = text.lastIndexOf(':');
      String host = colon < 0 ? "" : text.substring(0, colon);
      if (host.isEmpty() || integerOrNull(text.substring(colon + 1), 0, 65535) == null) {
        throw new IllegalArgumentException("\"" + text + "\" is not host:port with a port from 0 (any free port) to 65535");
      }
      String wrong = listenHostProblem(host);
      if (wrong != null) {
        throw new IllegalArgumentException("\"" + text + "\": " + wrong);
      }
      return text;
    });
  }

  private static final java.util.regex.Pattern HOST_LABEL = java.util.regex.Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
  private static final java.util.regex.Pattern DOTTED_NUMBERS = java.util.regex.Pattern.compile("[0-9.]+");

  /**
   * What is wrong with the host of a listen address, or null: it must be an IPv4 address, an IPv6
   * address in brackets, or a host name. Only the syntax is checked here; whether the address is
   * on this host, or the name resolves, is the daemon's to find out (and retry) when it listens.
   */
  private static String listenHostProblem(String host) {
    if (host.startsWith("[") || host.endsWith("]")) {
      String inside = host.length() >= 2 && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : "";
      // A zone (fe80::1%eth0) names an interface that may come later: only its syntax is checked.
      int zone = inside.indexOf('%');
      String address = zone < 0 ? inside : inside.substring(0, zone);
      if (!address.contains(":") || !address.matches("[0-9A-Fa-f:.]+")
          || (zone >= 0 && !inside.substring(zone + 1).matches("[A-Za-z0-9_.-]{1,15}"))) {
        return "\"" + host + "\" is not an IPv6 address in brackets, such as [::1]";
      }
      try {
        // A bracketed literal is parsed, never looked up: InetAddress refuses a bracketed non-literal.
        java.net.InetAddress.getByName("[" + address + "]");
        return null;
      } catch (java.net.UnknownHostException e) {
        return "\"" + host + "\" is not an IPv6 address in brackets, such as [::1]";
      }
    }
    if (host.contains(":")) {
      return "an IPv6 address needs brackets, such as [::1]:9477";
    }
    if (DOTTED_NUMBERS.matcher(host).matches()) {
      String[] parts = host.split("\\.", -1);
      boolean ok = parts.length == 4;
      for (String p : parts) {
        ok &= !p.isEmpty() && p.length() <= 3 && integerOrNull(p, 0, 255) != null;
      }
      return ok ? null : "\"" + host + "\" is not an IPv4 address such as 127.0.0.1";
    }
    String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    if (name.length() > 253 || java.util.Arrays.stream(name.split("\\.", -1)).anyMatch(l -> !HOST_LABEL.matcher(l).matches())) {
      return "\"" + host + "\" is neither an IP address nor a host name (letters, digits and -, in dot-separated labels)";
    }
    return null;
  }

  private static Integer integerOrNull(String text, int min, int max) {
    try {
      int v = Integer.parseInt(text);
      return v < min || v > max ? null : v;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  static ValueType<List<Glob>> globs() {
    return list("a list of file name patterns such as \"cuda.shm.*\" (* ? and [a-z], no '/')", Glob::of, false);
  }

  /** Literal characters a reap pattern must begin with: "psm_", the shortest of the producers' prefixes. */
  static final int MIN_REAP_PREFIX = 4;

  /**
   * Names shmguard may reap. Every producer names its segments with a fixed prefix of its own
   * (nccl-, torch_, psm_, sem.mp-, ucx_shm_posix_...), so each pattern must begin with at least
   * {@link #MIN_REAP_PREFIX} literal characters: "*", "?*", "[a-z]*" or "n*" would make any
   * unheld file in a watched tmpfs, whoever made it, a candidate.
   */
  static ValueType<List<Glob>> reapPatterns() {
    return list("a list of file name patterns such as \"nccl-*\" (* ? and [a-z], no '/'), each beginning with at least "
        + MIN_REAP_PREFIX + " literal characters before any * ? or [ (its producer's own prefix, such as nccl- or psm_)", text -> {
          Glob g = Glob.of(text);
          if (g.literalPrefix().length() < MIN_REAP_PREFIX) {
            throw new IllegalArgumentException("\"" + text + "\" would match almost any name: it begins with "
                + (g.literalPrefix().isEmpty() ? "no literal characters" : "only \"" + g.literalPrefix() + "\""));
          }
          return g;
        }, false);
  }

  static ValueType<List<String>> mounts() {
    return list("a list whose items are auto or absolute tmpfs mount points (" + PathTypes.PLAIN_PATH + "), each named once", text -> {
      if (!text.equals("auto") && !text.startsWith("/")) {
        throw new IllegalArgumentException("\"" + text + "\" is neither auto nor an absolute path");
      }
      return text.equals("auto") ? text : PathTypes.requirePlain(text, true);
    }, true);
  }

  /** A list of absolute paths in their plain form, each once; empty for none. */
  static ValueType<List<String>> paths() {
    return list("a list of absolute paths (" + PathTypes.PLAIN_PATH + "), each named once", text -> PathTypes.requirePlain(text, false),
        true);
  }

  static <T> ValueType<T> scalar(String allowed, Function<String, T> parse) {
    return new ValueType<>() {
      @Override
      public T parse(YamlNode node) {
        if (node.isNull()) {
          throw new IllegalArgumentException("no value given");
        }
        if (node.isMap() || node.isList()) {
          throw new IllegalArgumentException("a single value is needed here, not a " + (node.isMap() ? "mapping" : "list"));
        }
        return parse.apply(node.text().trim());
      }

      @Override
      public String allowed() {
        return allowed;
      }
    };
  }

  /** @param unique whether an item may appear only once */
  private static <T> ValueType<List<T>> list(String allowed, Function<String, T> item, boolean unique) {
    String allowedItems = allowed + "; at most " + ConfigLimits.MAX_LIST_ITEMS + " items";
    return new ValueType<>() {
      @Override
      public List<T> parse(YamlNode node) {
        if (node.isNull()) {
          return List.of();
        }
        if (!node.isList()) {
          throw new IllegalArgumentException("a list is needed here");
        }
        if (node.list().size() > ConfigLimits.MAX_LIST_ITEMS) {
          throw new IllegalArgumentException("the list has " + node.list().size() + " items");
        }
        List<T> out = new ArrayList<>();
        for (YamlNode n : node.list()) {
          if (n.isNull() || n.isMap() || n.isList()) {
            throw new IllegalArgumentException("every item must be a single value");
          }
          String notText = notText(n);
          if (notText != null) {
            throw new IllegalArgumentException(n.text() + " is " + notText + " in YAML, not text; quote it (\"" + n.text()
                + "\") if a name is meant");
          }
          T value = item.apply(n.text());
          if (unique && out.contains(value)) {
            throw new IllegalArgumentException("\"" + n.text() + "\" is listed twice");
          }
          out.add(value);
        }
        return List.copyOf(out);
      }

      @Override
      public String allowed() {
        return allowedItems;
      }
    };
  }

  private static final org.yaml.snakeyaml.resolver.Resolver YAML_TYPES = new org.yaml.snakeyaml.resolver.Resolver();

  /**
   * What an unquoted list item is in YAML when it is not a string ("a number" for 123, "a boolean"
   * for true or yes, "a date" for 2024-01-01), or null for text: [123] would otherwise be taken as
   * the name "123", a type confusion that a key meant for names must refuse like any bad value.
   */
  private static String notText(YamlNode n) {
    if (n.scalarString()) {
      return null; // quoted: text, whatever it looks like
    }
    org.yaml.snakeyaml.nodes.Tag tag = YAML_TYPES.resolve(org.yaml.snakeyaml.nodes.NodeId.scalar, n.text(), true);
    if (tag.equals(org.yaml.snakeyaml.nodes.Tag.INT) || tag.equals(org.yaml.snakeyaml.nodes.Tag.FLOAT)) {
      return "a number";
    }
    if (tag.equals(org.yaml.snakeyaml.nodes.Tag.BOOL)) {
      return "a boolean";
    }
    if (tag.equals(org.yaml.snakeyaml.nodes.Tag.TIMESTAMP)) {
      return "a date";
    }
    return null;
  }

  static Duration parseDuration(String text) {
    Matcher m = DURATION.matcher(text);
    if (!m.matches()) {
      return null;
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      return null;
    }
    try {
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    } catch (ArithmeticException tooLong) {
      return Duration.ofSeconds(Long.MAX_VALUE); // out of every key's range, and said so
    }
  }

  static Long parseSize(String text) {
    Matcher m = SIZE.matcher(text);
    if (!m.matches() || (!m.group(3).isEmpty() && m.group(2).isEmpty() && !m.group(3).equalsIgnoreCase("b"))) {
      return null;
    }
    int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      case "t" -> 40;
      default -> 0;
    };
    try {
      long n = Long.parseLong(m.group(1));
      if (n > (Long.MAX_VALUE >> shift)) {
        return null;
      }
      return n << shift;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
