package org.shmguard.policy;

import java.util.regex.Pattern;

/**
 * A shell-style name pattern: {@code *} any run of characters, {@code ?} one character,
 * {@code [abc]} / {@code [a-z]} / {@code [!a-z]} a class. Matches whole names only.
 */
public final class Glob {
  private final String text;
  private final Pattern regex;

  private Glob(String text, Pattern regex) {
    this.text = text;
    this.regex = regex;
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
    return regex.matcher(name).matches();
  }

  /** The characters every matching name begins with: the text before the first *, ? or [. */
  public String literalPrefix() {
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
