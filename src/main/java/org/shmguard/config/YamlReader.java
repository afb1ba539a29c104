package org.shmguard.config;

import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.MappingStartEvent;
import org.yaml.snakeyaml.events.NodeEvent;
import org.yaml.snakeyaml.events.ScalarEvent;
import org.yaml.snakeyaml.events.SequenceStartEvent;
import org.yaml.snakeyaml.parser.Parser;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.ReaderException;
import org.yaml.snakeyaml.reader.StreamReader;

/**
 * Reads one YAML document into {@link YamlNode}s, holding it to {@link ConfigLimits}: its size,
 * its depth, one document, no anchors, aliases or tags, no key twice. Every refusal, a syntax
 * error included, is one {@link ConfigException} with the line (and the key where there is one).
 *
 * <p>It reads SnakeYAML's event stream (its parser, never its composer or constructor): no node
 * graph is built and no object is made from a tag, so the limits are counted here as events
 * arrive. Anchors and aliases are refused outright, which closes every alias-expansion ("billion
 * laughs") file; SnakeYAML's code-point limit is set as a second bound behind the size check.
 * Every scalar is kept as its text; a plain empty value, {@code ~} or {@code null} is a null, so
 * "grace:" with no value says "no value given", while a quoted {@code ""} stays the empty string.
 */
final class YamlReader {
  private static final String CORE_TAG = "tag:yaml.org,2002:";

  private final Parser parser;
  private final String source;
  private final String text;
  /** The last key read and its line, to name the key a syntax error is in. */
  private String lastKey;
  private int lastKeyLine;

  private YamlReader(Parser parser, String source, String text) {
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
    YamlReader r = new YamlReader(new ParserImpl(new StreamReader(text), loaderOptions()), source, text);
    try {
      return r.document();
    } catch (YAMLException e) {
      throw r.syntaxError(e);
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

  private YamlNode document() throws ConfigException {
    next(); // the stream's start
    Event e = next();
    if (e.is(Event.ID.StreamEnd)) {
      return new YamlNode(null, 1, false);
    }
    YamlNode root = read(next(), "", 1); // after the document's start
    next(); // the document's end
    Event after = next();
    if (after.is(Event.ID.DocumentStart)) {
      Event first = next();
      String key = null;
      if (first instanceof MappingStartEvent) {
        Event k = next();
        key = k instanceof ScalarEvent s ? s.getValue() : null;
      }
      throw new ConfigException(source, lineOf(after), key, "a second YAML document starts here (after ---), and shmguard "
          + "would ignore it; allowed: " + ConfigLimits.ALLOWED_DOCUMENTS);
    }
    return root;
  }

  private Event next() {
    return parser.getEvent();
  }

  private YamlNode read(Event e, String path, int depth) throws ConfigException {
    int line = lineOf(e);
    refuseReferencesAndTags(e, path.isEmpty() ? null : path);
    if (e instanceof MappingStartEvent) {
      refuseDepth(e, path, depth);
      Map<String, YamlNode> map = new LinkedHashMap<>();
      Map<String, Integer> lines = new LinkedHashMap<>();
      for (Event k = next(); !k.is(Event.ID.MappingEnd); k = next()) {
        if (!(k instanceof ScalarEvent ks)) {
          refuseReferencesAndTags(k, lastKey);
          int kl = lineOf(k);
          throw new ConfigException(source, kl, lastKey != null && lastKeyLine == kl ? lastKey : null,
              "not valid YAML: a key must be a single name, not a list or a mapping");
        }
        String key = ks.getValue();
        int keyLine = lineOf(k);
        String keyPath = path.isEmpty() ? key : path + "." + key;
        lastKey = keyPath;
        lastKeyLine = keyLine;
        refuseReferencesAndTags(k, keyPath);
        if (lines.containsKey(key)) {
          throw new ConfigException(source, keyLine, keyPath, "given twice (first on line " + lines.get(key) + ")");
        }
        lines.put(key, keyLine);
        YamlNode v = read(next(), keyPath, depth + 1);
        // Report a key's line, not its value's: "grace:" is where a person looks.
        map.put(key, new YamlNode(v.value(), keyLine, v.scalarString()));
      }
      return new YamlNode(map, line, false);
    }
    if (e instanceof SequenceStartEvent) {
      refuseDepth(e, path, depth);
      List<YamlNode> list = new ArrayList<>();
      for (Event item = next(); !item.is(Event.ID.SequenceEnd); item = next()) {
        list.add(read(item, path, depth + 1));
      }
      return new YamlNode(list, line, false);
    }
    ScalarEvent s = (ScalarEvent) e;
    if (isNull(s)) {
      return new YamlNode(null, line, false);
    }
    return new YamlNode(s.getValue(), line, !s.isPlain());
  }

  /** YAML's null: a plain (unquoted) empty value, ~ or null; a quoted "" is the empty string. */
  private static boolean isNull(ScalarEvent s) {
    String v = s.getValue();
    return s.isPlain() && (v.isEmpty() || v.equals("~") || v.equals("null") || v.equals("Null") || v.equals("NULL"));
  }

  private void refuseDepth(Event e, String path, int depth) throws ConfigException {
    if (depth > ConfigLimits.MAX_DEPTH) {
      throw new ConfigException(source, lineOf(e), path.isEmpty() ? null : path,
          "nested more than " + ConfigLimits.MAX_DEPTH + " levels deep; allowed: " + ConfigLimits.ALLOWED_DEPTH);
    }
  }

  private void refuseReferencesAndTags(Event e, String key) throws ConfigException {
    if (e instanceof AliasEvent a) {
      throw new ConfigException(source, lineOf(e), key, "an alias (*" + a.getAnchor()
          + ") refers to a value written elsewhere; anchors (&) and aliases (*) are not supported; allowed: "
          + ConfigLimits.ALLOWED_REFERENCES);
    }
    if (e instanceof NodeEvent n && n.getAnchor() != null) {
      throw new ConfigException(source, lineOf(e), key, "an anchor (&" + n.getAnchor()
          + ") marks a value for reuse; anchors (&) and aliases (*) are not supported; allowed: " + ConfigLimits.ALLOWED_REFERENCES);
    }
    String tag = e instanceof ScalarEvent s ? s.getTag() : e instanceof CollectionStartEvent c ? c.getTag() : null;
    if (tag != null) {
      String shown = tag.startsWith(CORE_TAG) ? "!!" + tag.substring(CORE_TAG.length()) : "!" + tag.replaceFirst("^!+", "");
      throw new ConfigException(source, lineOf(e), key, "a YAML tag (" + oneLine(shown) + ") is not supported; allowed: "
          + ConfigLimits.ALLOWED_TAGS);
    }
  }

  private static int lineOf(Event e) {
    return e.getStartMark().getLine() + 1;
  }

  /** A YAML syntax error as one line (see {@link YamlSyntax}): SnakeYAML's own text spans several, with a caret drawing. */
  private ConfigException syntaxError(YAMLException e) {
    int line = 0;
    String problem = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
    String context = null;
    int contextLine = 0;
    if (e instanceof ReaderException unreadable) {
      // A character YAML does not allow (U+FFFE, a lone surrogate): SnakeYAML gives its position, not its line.
      line = lineOfCodePoint(unreadable.getPosition());
    } else if (e instanceof MarkedYAMLException marked && marked.getProblemMark() != null) {
      line = marked.getProblemMark().getLine() + 1;
      problem = marked.getProblem();
      Mark mark = marked.getContextMark();
      if (marked.getContext() != null && mark != null) {
        context = marked.getContext();
        contextLine = mark.getLine() + 1;
      }
    }
    String key = lastKey != null && lastKeyLine == line ? lastKey : null;
    return YamlSyntax.error(source, line, key, problem, context, contextLine);
  }

  private int lineOfCodePoint(int position) {
    int line = 1;
    int end = text.offsetByCodePoints(0, Math.min(position, text.codePointCount(0, text.length())));
    for (int i = 0; i < end; i++) {
      line += text.charAt(i) == '\n' ? 1 : 0;
    }
    return line;
  }

  /** SnakeYAML's text on one line: it lays a message out over several, and shows a tab as \t(TAB). */
  private static String oneLine(String text) {
    return text.replace("\\t(TAB)", "TAB").replace("\t(TAB)", "TAB").strip().replaceAll("\\s+", " ");
  }
}
