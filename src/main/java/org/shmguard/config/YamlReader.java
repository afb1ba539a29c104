package org.shmguard.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads one YAML document into {@link YamlNode}s, holding it to {@link ConfigLimits}: its size,
 * its depth, one document, no anchors, aliases or tags, no key twice. Every refusal, a syntax
 * error included, is one {@link ConfigException} with the line (and the key where there is one).
 *
 * <p>Why the limits are counted here and not left to SnakeYAML's {@code LoaderOptions}: Jackson
 * reads YAML as a stream of events and never runs SnakeYAML's composer, where the nesting-depth
 * and alias limits live, so those options have no effect on this path; only the code-point
 * limit (in SnakeYAML's reader) does, and it is set as a second bound behind the size check.
 * Jackson also does not expand an alias: it hands back the anchor's name as a string, so
 * {@code deny: *d} would silently mean the pattern "d". Refusing anchors and aliases outright
 * closes both that and every alias-expansion ("billion laughs") file.
 */
final class YamlReader {
  // The builder starts with no YAML parser features, unlike new YAMLFactory(): "grace:" with no
  // value must stay a null, not become "".
  private static final YAMLFactory FACTORY = YAMLFactory.builder()
      .loaderOptions(loaderOptions())
      .enable(YAMLParser.Feature.EMPTY_STRING_AS_NULL)
      .build();
  private static final String CORE_TAG = "tag:yaml.org,2002:";

  private final YAMLParser parser;
  private final String source;
  private final String text;
  /** The last key read and its line, to name the key a syntax error is in. */
  private String lastKey;
  private int lastKeyLine;

  private YamlReader(YAMLParser parser, String source, String text) {
    this.parser = parser;
    this.source = source;
    this.text = text;
  }

  private static LoaderOptions loaderOptions() {
    LoaderOptions o = new LoaderOptions();
    o.setCodePointLimit(ConfigLimits.MAX_BYTES + 1);
    return o;
  }

  /** Parses one YAML document; an empty document is a null node. */
  static YamlNode parse(Reader reader, String source) throws ConfigException {
    String text = readBounded(reader, source);
    refuseControlCharacters(text, source);
    YamlReader r = null;
    try {
      r = new YamlReader(FACTORY.createParser(text), source, text);
      return r.document();
    } catch (JsonProcessingException e) {
      throw r == null ? new ConfigException(source, 0, null, "not valid YAML: " + e.getOriginalMessage()) : r.syntaxError(e);
    } catch (IOException e) {
      throw new ConfigException(source, 0, null, "cannot read: " + e.getMessage());
    } finally {
      if (r != null) {
        r.close();
      }
    }
  }

  private void close() {
    try {
      parser.close();
    } catch (IOException ignored) {
      // The text is in memory: closing it releases nothing that could fail in a way worth reporting.
    }
  }

  /** At most {@link ConfigLimits#MAX_BYTES} characters: a larger text is refused unread past the limit. */
  private static String readBounded(Reader reader, String source) throws ConfigException {
    char[] buf = new char[ConfigLimits.MAX_BYTES + 1];
    int n = 0;
    try {
      int got;
      while (n < buf.length && (got = reader.read(buf, n, buf.length - n)) > 0) {
        n += got;
      }
    } catch (IOException e) {
      throw new ConfigException(source, 0, null, "cannot read: " + e.getMessage());
    }
    if (n > ConfigLimits.MAX_BYTES) {
      int line = 1;
      for (int i = 0; i < ConfigLimits.MAX_BYTES; i++) {
        line += buf[i] == '\n' ? 1 : 0;
      }
      throw tooLarge(source, line);
    }
    return new String(buf, 0, n);
  }

  /**
   * SnakeYAML refuses these too, but names no line; a control character in a value would also
   * reach paths and log lines.
   */
  private static void refuseControlCharacters(String text, String source) throws ConfigException {
    int line = 1;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n') {
        line++;
      } else if (c != '\t' && c != '\r' && Character.isISOControl(c)) {
        throw new ConfigException(source, line, null, String.format("the control character 0x%02x is in the file; allowed: %s",
            (int) c, ConfigLimits.ALLOWED_TEXT));
      }
    }
  }

  /** The file passes {@link ConfigLimits#MAX_BYTES} on {@code line}. */
  static ConfigException tooLarge(String source, int line) {
    return new ConfigException(source, line, null, "the file is larger than " + ConfigLimits.MAX_BYTES
        + " bytes (this line passes the limit); allowed: " + ConfigLimits.ALLOWED_SIZE);
  }

  private YamlNode document() throws IOException, ConfigException {
    JsonToken t = parser.nextToken();
    if (t == null) {
      return new YamlNode(null, 1, false);
    }
    YamlNode root = read(t, "", 1);
    JsonToken next = parser.nextToken();
    if (next != null) {
      int line = markerLineAtOrBefore(line());
      String key = next == JsonToken.START_OBJECT && parser.nextToken() == JsonToken.FIELD_NAME ? parser.currentName() : null;
      throw new ConfigException(source, line, key, "a second YAML document starts here (after ---), and shmguard would ignore it; allowed: "
          + ConfigLimits.ALLOWED_DOCUMENTS);
    }
    return root;
  }

  /** The line of the last "---" at or before {@code line}: where a second document begins, which Jackson does not report. */
  private int markerLineAtOrBefore(int line) {
    int n = 1;
    int marker = line;
    for (String l : text.split("\n", -1)) {
      if (n > line) {
        break;
      }
      if (l.startsWith("---") && (l.length() == 3 || Character.isWhitespace(l.charAt(3)))) {
        marker = n;
      }
      n++;
    }
    return marker;
  }

  private YamlNode read(JsonToken t, String path, int depth) throws IOException, ConfigException {
    int line = line();
    refuseReferencesAndTags(path.isEmpty() ? null : path);
    switch (t) {
      case START_OBJECT -> {
        refuseDepth(path, depth);
        Map<String, YamlNode> map = new LinkedHashMap<>();
        Map<String, Integer> lines = new LinkedHashMap<>();
        while ((t = parser.nextToken()) == JsonToken.FIELD_NAME) {
          String key = parser.currentName();
          int keyLine = line();
          String keyPath = path.isEmpty() ? key : path + "." + key;
          lastKey = keyPath;
          lastKeyLine = keyLine;
          refuseReferencesAndTags(keyPath);
          if (lines.containsKey(key)) {
            throw new ConfigException(source, keyLine, keyPath, "given twice (first on line " + lines.get(key) + ")");
          }
          lines.put(key, keyLine);
          YamlNode v = read(parser.nextToken(), keyPath, depth + 1);
          // Report a key's line, not its value's: "grace:" is where a person looks.
          map.put(key, new YamlNode(v.value(), keyLine, v.scalarString()));
        }
        return new YamlNode(map, line, false);
      }
      case START_ARRAY -> {
        refuseDepth(path, depth);
        List<YamlNode> list = new ArrayList<>();
        while ((t = parser.nextToken()) != JsonToken.END_ARRAY) {
          list.add(read(t, path, depth + 1));
        }
        return new YamlNode(list, line, false);
      }
      case VALUE_NULL -> {
        return new YamlNode(null, line, false);
      }
      case VALUE_STRING -> {
        return new YamlNode(parser.getText(), line, true);
      }
      default -> {
        return new YamlNode(parser.getText(), line, false);
      }
    }
  }

  private void refuseDepth(String path, int depth) throws ConfigException {
    if (depth > ConfigLimits.MAX_DEPTH) {
      throw new ConfigException(source, line(), path.isEmpty() ? null : path,
          "nested more than " + ConfigLimits.MAX_DEPTH + " levels deep; allowed: " + ConfigLimits.ALLOWED_DEPTH);
    }
  }

  private void refuseReferencesAndTags(String key) throws IOException, ConfigException {
    if (parser.isCurrentAlias()) {
      throw new ConfigException(source, line(), key, "an alias (*" + parser.getText()
          + ") refers to a value written elsewhere; anchors (&) and aliases (*) are not supported; allowed: "
          + ConfigLimits.ALLOWED_REFERENCES);
    }
    if (parser.getObjectId() != null) {
      throw new ConfigException(source, line(), key, "an anchor (&" + parser.getObjectId()
          + ") marks a value for reuse; anchors (&) and aliases (*) are not supported; allowed: " + ConfigLimits.ALLOWED_REFERENCES);
    }
    String tag = parser.getTypeId();
    if (tag != null) {
      String shown = tag.startsWith(CORE_TAG) ? "!!" + tag.substring(CORE_TAG.length()) : "!" + tag;
      throw new ConfigException(source, line(), key, "a YAML tag (" + oneLine(shown) + ") is not supported; allowed: "
          + ConfigLimits.ALLOWED_TAGS);
    }
  }

  private int line() {
    return parser.currentTokenLocation().getLineNr();
  }

  /** A YAML syntax error as one line (see {@link YamlSyntax}): SnakeYAML's own text spans several, with a caret drawing. */
  private ConfigException syntaxError(JsonProcessingException e) {
    MarkedYAMLException marked = markedCause(e);
    int line;
    String problem;
    String context = null;
    int contextLine = 0;
    if (marked != null && marked.getProblemMark() != null) {
      line = marked.getProblemMark().getLine() + 1;
      problem = marked.getProblem();
      Mark mark = marked.getContextMark();
      if (marked.getContext() != null && mark != null) {
        context = marked.getContext();
        contextLine = mark.getLine() + 1;
      }
    } else {
      line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
      String original = String.valueOf(e.getOriginalMessage());
      problem = original.startsWith("Expected a field name")
          ? "a key must be a single name, not a list or a mapping"
          : original.lines().findFirst().orElse(original);
    }
    String key = lastKey != null && lastKeyLine == line ? lastKey : null;
    return YamlSyntax.error(source, line, key, problem, context, contextLine);
  }

  private static MarkedYAMLException markedCause(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof MarkedYAMLException m) {
        return m;
      }
    }
    return null;
  }

  /** SnakeYAML's text on one line: it lays a message out over several, and shows a tab as \t(TAB). */
  private static String oneLine(String text) {
    return text.replace("\\t(TAB)", "TAB").replace("\t(TAB)", "TAB").strip().replaceAll("\\s+", " ");
  }
}
