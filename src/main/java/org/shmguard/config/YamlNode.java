package org.shmguard.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML value with the line it starts on, so every error can point at its line. A mapping is a
 * {@code Map<String, YamlNode>}, a sequence a {@code List<YamlNode>}, a scalar its text.
 */
record YamlNode(Object value, int line, boolean scalarString) {
  private static final YAMLFactory FACTORY = new YAMLFactory();

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

  /** Parses one YAML document; an empty document is a null node. */
  static YamlNode parse(Reader reader, String source) throws ConfigException {
    try (JsonParser p = FACTORY.createParser(reader)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        return new YamlNode(null, 1, false);
      }
      return read(p, t, source, "");
    } catch (JsonProcessingException e) {
      int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
      throw new ConfigException(source, line, null, "not valid YAML: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new ConfigException(source, 0, null, "cannot read: " + e.getMessage());
    }
  }

  private static YamlNode read(JsonParser p, JsonToken t, String source, String path) throws IOException, ConfigException {
    int line = p.currentTokenLocation().getLineNr();
    switch (t) {
      case START_OBJECT -> {
        Map<String, YamlNode> map = new LinkedHashMap<>();
        Map<String, Integer> lines = new LinkedHashMap<>();
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
          String key = p.currentName();
          int keyLine = p.currentTokenLocation().getLineNr();
          String keyPath = path.isEmpty() ? key : path + "." + key;
          if (lines.containsKey(key)) {
            throw new ConfigException(source, keyLine, keyPath, "given twice (first on line " + lines.get(key) + ")");
          }
          lines.put(key, keyLine);
          YamlNode v = read(p, p.nextToken(), source, keyPath);
          // Report a key's line, not its value's: "grace:" is where a person looks.
          map.put(key, new YamlNode(v.value, keyLine, v.scalarString));
        }
        return new YamlNode(map, line, false);
      }
      case START_ARRAY -> {
        List<YamlNode> list = new ArrayList<>();
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
          list.add(read(p, t, source, path));
        }
        return new YamlNode(list, line, false);
      }
      case VALUE_NULL -> {
        return new YamlNode(null, line, false);
      }
      case VALUE_STRING -> {
        return new YamlNode(p.getText(), line, true);
      }
      default -> {
        return new YamlNode(p.getText(), line, false);
      }
    }
  }
}
