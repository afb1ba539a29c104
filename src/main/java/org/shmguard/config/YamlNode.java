package org.shmguard.config;

import java.io.Reader;
import java.util.List;
import java.util.Map;

/**
 * A YAML value with the line it starts on, so every error can point at its line. A mapping is a
 * {@code Map<String, YamlNode>}, a sequence a {@code List<YamlNode>}, a scalar its text.
 */
record YamlNode(Object value, int line, boolean scalarString) {
  boolean isMap() {
    return value instanceof Map;
  }

  boolean isList() {
    return value instanceof List;
  }

  boolean isNull() {
    return value == null;
  }

  @SuppressWarnings("unchecked")
  Map<String, YamlNode> map() {
    return (Map<String, YamlNode>) value;
  }

  @SuppressWarnings("unchecked")
  List<YamlNode> list() {
    return (List<YamlNode>) value;
  }

  String text() {
    return value instanceof String s ? s : null;
  }

  /** Parses one YAML document within {@link ConfigLimits}; an empty document is a null node. */
  static YamlNode parse(Reader reader, String source) throws ConfigException {
    try {
      return YamlReader.parse(reader, source);
    } catch (RuntimeException e) {
      // A parser's own exception that its reader did not turn into a ConfigException: still one line.
      throw YamlSyntax.unexpected(source, e);
    }
  }
}
