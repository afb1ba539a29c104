package org.shmguard.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;

/** shmguard.yaml(5) is docs/configuration.md rendered: every key of the reference is on the page, and man reads it cleanly. */
class DocPageTest {

  @Test
  void theConfigurationPageNamesEveryKeyOfTheReference() throws Exception {
    String doc = Files.readString(Path.of("docs/configuration.md"));
    String page = DocPage.render(doc, "shmguard.yaml", "5", "File Formats", "shmguard test");
    assertThat(page).startsWith(".TH SHMGUARD.YAML 5 ").contains(".SH NAME\nshmguard.yaml \\- configuration reference\n");
    Matcher keys = Pattern.compile("^\\| `([A-Za-z.]+)` \\|", Pattern.MULTILINE).matcher(doc);
    int count = 0;
    while (keys.find()) {
      assertThat(page).as("page entry for %s", keys.group(1)).contains(".TP\n\\fB" + keys.group(1) + "\\fR\n");
      count++;
    }
    assertThat(count).isGreaterThan(20);
  }

  @Test
  void manFormatsThePageWithoutWarnings(@TempDir Path dir) throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/man")), "man (man-db) is not installed");
    Path page = dir.resolve("shmguard.yaml.5");
    Files.writeString(page, DocPage.render(Files.readString(Path.of("docs/configuration.md")), "shmguard.yaml", "5", "File Formats", "shmguard test"));
    String out = Cmd.run("sh", "-c", "MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l " + page + " 2>&1 >/dev/null");
    assertThat(out).isEmpty();
    String text = Cmd.run("sh", "-c", "MANWIDTH=100 LC_ALL=C.UTF-8 man -E UTF-8 -l " + page + " | col -b");
    assertThat(text).contains("reap.grace").contains("THE FILE").doesNotContain("](");
  }

  @Test
  void inlineMarkupBecomesTroffAndLinksKeepTheirText() {
    assertThat(DocPage.inline("see [safety](safety.md#x), `reap.grace` and **never**"))
        .isEqualTo("see safety, \\fBreap.grace\\fR and \\fBnever\\fR");
    assertThat(DocPage.inline(".hidden")).isEqualTo("\\&.hidden");
  }
}
