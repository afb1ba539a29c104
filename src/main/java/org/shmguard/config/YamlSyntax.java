package org.shmguard.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A YAML parser's refusal as the one line an operator reads: "file:line: key: not valid YAML:
 * what is wrong (and what to do)". Whatever parser reads the file hands its problem text here:
 * this is where a parse failure becomes a {@link ConfigException}, so the form of the message,
 * and the rule that no stack trace reaches the operator, do not depend on the parser.
 *
 * <pre>{@code
 * throw YamlSyntax.error(source, 3, "reap.grace", "found unexpected end of stream", "while scanning a quoted scalar", 2);
 * // file:2: not valid YAML: a quoted value opened on line 2 is never closed
 * }</pre>
 */
final class YamlSyntax {
  private static final String UNCLOSED = "a quoted value opened";
  private static final Pattern LINE = Pattern.compile("\\bline (\\d+)");

  private YamlSyntax() {}

  /**
   * @param line 1-based line of the problem, 0 if unknown
   * @param key the dotted key it is in, or null
   * @param context what the parser was reading (such as "while scanning a quoted scalar"), or null
   * @param contextLine where that began, 0 if unknown
   */
  static ConfigException error(String source, int line, String key, String problem, String context, int contextLine) {
    String why = explain(problem, context, contextLine, line);
    // An unclosed quote is found where the file ends: the line to fix is where it opened.
    int at = why.startsWith(UNCLOSED) && contextLine > 0 ? contextLine : line;
    return new ConfigException(source, at, at == line ? key : null, "not valid YAML: " + why);
  }

  /**
   * Anything else a parser throws, which must still reach the operator as one line: its first line,
   * and the line number its text names ("line 7"), if any.
   */
  static ConfigException unexpected(String source, RuntimeException e) {
    String text = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    Matcher m = LINE.matcher(text);
    int line = m.find() ? Integer.parseInt(m.group(1)) : 0;
    String first = text.lines().findFirst().orElse(text);
    return error(source, line, null, first, null, 0);
  }

  /** The parser's words on one line, with what to do for the mistakes people make most. */
  static String explain(String problem, String context, int contextLine, int line) {
    String p = oneLine(problem);
    String c = context == null ? null : oneLine(context);
    if (p.contains("TAB") || p.contains("\t") || p.toLowerCase(java.util.Locale.ROOT).contains("tab character")) {
      return "a tab where YAML allows only spaces; indent with spaces";
    }
    if (c != null && c.contains("quoted scalar") && p.contains("end of stream")) {
      return UNCLOSED + at(contextLine) + " is never closed";
    }
    if (p.startsWith("mapping values are not allowed")) {
      return "a \"key: value\" where none may start: is this line indented deeper than the key above it, "
          + "or does a value hold \": \" unquoted?";
    }
    if (p.startsWith("expected <block end>")) {
      return "this line's indentation matches no key above it: indent it as deep as its siblings";
    }
    if (c != null && contextLine > 0 && contextLine != line) {
      return p + " (" + c + at(contextLine) + ")";
    }
    return p;
  }

  private static String at(int line) {
    return line > 0 ? " on line " + line : "";
  }

  /** A parser's text on one line: some lay a message out over several, or show a tab as \t(TAB). */
  static String oneLine(String text) {
    return String.valueOf(text).replace("\\t(TAB)", "TAB").replace("\t(TAB)", "TAB").strip().replaceAll("\\s+", " ");
  }
}
