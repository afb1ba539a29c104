package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.shmguard.policy.family.SegmentFamilies;

/**
 * docs/configuration.md is the operator's reference (and, rendered, shmguard.yaml(5)): it lists
 * every key the schema knows, no key the schema does not, and each key's default as the shipped
 * file sets it. The segment families share one row per key ({@code families.<family>.reap}).
 */
class ConfigDocsTest {
  private static final Pattern ROW = Pattern.compile("^\\| `([A-Za-z.<>]+)` \\| ([^|]*(?:\\\\\\|[^|]*)*) \\|", Pattern.MULTILINE);

  @Test
  void theReferenceHasARowForEveryKeyAndNoOther() throws Exception {
    Set<String> expected = new TreeSet<>();
    for (String key : ConfigSchema.KEYS.keySet()) {
      expected.add(row(key));
    }
    assertThat(new TreeSet<>(rows().keySet())).isEqualTo(expected);
  }

  @Test
  void eachDefaultInTheReferenceIsTheShippedFilesValue() throws Exception {
    YamlNode shipped = YamlNode.parse(new StringReader(Files.readString(Path.of("config/shmguard.yaml"))), "config/shmguard.yaml");
    for (Map.Entry<String, String> row : rows().entrySet()) {
      if (row.getKey().contains("<family>")) {
        continue; // a default per family: docs/families.md's table, checked below
      }
      YamlNode node = shipped;
      for (String part : row.getKey().split("\\.")) {
        assertThat(node.isMap()).as("%s in the shipped file", row.getKey()).isTrue();
        node = node.map().get(part);
        assertThat(node).as("%s in the shipped file", row.getKey()).isNotNull();
      }
      assertThat(normal(row.getValue())).as("documented default of %s", row.getKey()).isEqualTo(normal("`" + shown(node) + "`"));
    }
  }

  /** Every family's section is named in the reference and in docs/families.md. */
  @Test
  void everySegmentFamilySectionIsNamedInTheReferenceAndTheFamiliesDoc() throws Exception {
    String reference = Files.readString(Path.of("docs/configuration.md"));
    String doc = Files.readString(Path.of("docs/families.md"));
    for (var family : SegmentFamilies.standard().configurable()) {
      assertThat(reference).as("docs/configuration.md names family %s", family.name()).contains("`" + family.name() + "`");
      assertThat(doc).as("docs/families.md names family %s", family.name()).contains("`" + family.name() + "`");
    }
  }

  private static String row(String key) {
    if (key.startsWith(FamilySection.SECTION + ".")) {
      String[] parts = key.split("\\.");
      return parts[0] + ".<family>." + parts[2];
    }
    return key;
  }

  private static Map<String, String> rows() throws Exception {
    String doc = Files.readString(Path.of("docs/configuration.md"));
    Map<String, String> rows = new LinkedHashMap<>();
    Matcher m = ROW.matcher(doc);
    while (m.find()) {
      assertThat(rows.put(m.group(1), m.group(2).trim())).as("one row for %s", m.group(1)).isNull();
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

  /** Quotes, backticks and spaces do not matter: `["nccl-*"]` is [nccl-*], `""` is empty. */
  private static String normal(String text) {
    return text.replace("\\|", "|").replace("\"", "").replace("`", "").replace(" ", "");
  }
}
