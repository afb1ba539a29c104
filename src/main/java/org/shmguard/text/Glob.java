package org.shmguard.text;

import java.util.regex.Pattern;

/**
 * A shell-style name pattern: {@code *} any run of characters, {@code ?} one character,
 * {@code [abc]} / {@code [a-z]} / {@code [!a-z]} a class. Matches whole names only.
 */
public final class Glob {
  private final String text;
  private final Pattern regex;
  /** The characters every matching name begins with (see {@link #literalPrefix()}). */
  private final String prefix;
  /**
   * For a pattern of literal characters and {@code *} only, its literal pieces between the stars;
   * null for one that needs the regex. Every file of every mount is matched on every pass, and a
   * regex costs a Matcher per name.
   */
  private final String[] pieces;

  private Glob(String text, Pattern regex) {
    this.text = text;
    this.regex = regex;
    this.prefix = literalPrefix(text);
    this.pieces = starPieces(text);
  }

  /** The pieces of a pattern with no '?', no '[' and no surrogate (where '?' would count code points); else null. */
  private static String[] starPieces(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '?' || c == '[' || Character.isSurrogate(c)) {
        return null;
      }
    }
    return text.split("\\*", -1);
  }

  /** Compiles a pattern; throws IllegalArgumentException naming the problem for a bad one. */
  public static Glob of(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("a pattern must not be empty");
    }
    if (text.indexOf('/') >= 0) {
      throw new IllegalArgumentException("a pattern matches a file name and must not contain '/'");
    }
    StringBuilder re = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '*' -> re.append(".*");
        case '?' -> re.append('.');
        case '[' -> {
          int close = text.indexOf(']', i + 2);
          if (close < 0) {
            throw new IllegalArgumentException("unclosed '[' in pattern " + text);
          }
          String body = text.substring(i + 1, close);
          re.append('[');
          if (body.startsWith("!")) {
            re.append('^');
            body = body.substring(1);
          }
          for (char b : body.toCharArray()) {
            if (b != '-' && "\\[]^&".indexOf(b) >= 0) {
              re.append('\\');
            }
            re.append(b);
          }
          re.append(']');
          i = close;
        }
        default -> re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return new Glob(text, Pattern.compile(re.toString(), Pattern.DOTALL));
  }

  public boolean matches(String name) {
    if (!name.startsWith(prefix)) {
      return false; // what the regex would say, without one
    }
    if (pieces == null) {
      return regex.matcher(name).matches();
    }
    if (pieces.length == 1) {
      return name.equals(text);
    }
    String last = pieces[pieces.length - 1];
    int end = name.length() - last.length();
    if (end < prefix.length() || !name.startsWith(last, end)) {
      return false;
    }
    // Each middle piece at its leftmost place after the one before: for stars alone that is a
    // match whenever any placement is.
    int at = prefix.length();
    for (int i = 1; i < pieces.length - 1; i++) {
      int found = name.indexOf(pieces[i], at);
      if (found < 0 || found + pieces[i].length() > end) {
        return false;
      }
      at = found + pieces[i].length();
    }
    return true;
  }

  /** The characters every matching name begins with: the text before the first *, ? or [. */
  public String literalPrefix() {
    return prefix;
  }

  private static String literalPrefix(String text) {
    int i = 0;
    while (i < text.length() && "*?[".indexOf(text.charAt(i)) < 0) {
      i++;
    }
    return text.substring(0, i);
  }

  public String text() {
    return text;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Glob g && g.text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
