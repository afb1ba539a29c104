package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md is the operator's reference (and, rendered, shmguard.yaml(5)): it lists
 * every key the schema knows, no key the schema does not, and each key's default as the shipped
 * file sets it.
 */
class ConfigDocsTest {
  private static final Pattern ROW = Pattern.compile("^\\| `([A-Za-z.]+)` \\| `([^|]*(?:\\\\\\|[^|]*)*)` \\|", Pattern.MULTILINE);

  @Test
  void theReferenceHasARowForEveryKeyAndNoOther() throws Exception {
    Map<String, String> rows = rows();
    assertThat(rows.keySet()).containsExactlyInAnyOrderElementsOf(ConfigSchema.KEYS.keySet());
  }

  @Test
  void eachDefaultInTheReferenceIsTheShippedFilesValue() throws Exception {
    YamlNode shipped = YamlNode.parse(new StringReader(Files.readString(Path.of("config/shmguard.yaml"))), "config/shmguard.yaml");
    for (Map.Entry<String, String> row : rows().entrySet()) {
      YamlNode node = shipped;
      for (String part : row.getKey().split("\\.")) {
        assertThat(node.isMap()).as("%s in the shipped file", row.getKey()).isTrue();
        node = node.map().get(part);
        assertThat(node).as("%s in the shipped file", row.getKey()).isNotNull();
      }
      assertThat(normal(row.getValue())).as("documented default of %s", row.getKey()).isEqualTo(normal(shown(node)));
    }
  }

  private static Map<String, String> rows() throws Exception {
    String doc = Files.readString(Path.of("docs/configuration.md"));
    Map<String, String> rows = new LinkedHashMap<>();
    Matcher m = ROW.matcher(doc);
    while (m.find()) {
      assertThat(rows.put(m.group(1), m.group(2))).as("one row for %s", m.group(1)).isNull();
    }
    return rows;
  }

  private static String shown(YamlNode node) {
    if (node.isList()) {
      List<String> items = node.list().stream().map(ConfigDocsTest::shown).collect(Collectors.toList());
      return "[" + String.join(", ", items) + "]";
    }
    return node.text() == null ? "" : node.text();
  }

  /** Quotes and spaces do not matter: `["nccl-*"]` is [nccl-*], `""` is empty. */
  private static String normal(String text) {
    return text.replace("\\|", "|").replace("\"", "").replace(" ", "");
  }
}
