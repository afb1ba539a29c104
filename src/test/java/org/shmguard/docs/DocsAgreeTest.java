package org.shmguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.cli.Main;
import picocli.CommandLine;

/**
 * The README and docs/ are what an operator reads: every link between them leads somewhere,
 * the README stays short enough to read to the end, and the commands and events they list are
 * the ones the code has.
 */
class DocsAgreeTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  @Test
  void everyRelativeLinkInTheReadmeAndDocsLeadsToAFileAndHeadingThatExist() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path doc : documents()) {
      Matcher m = LINK.matcher(Files.readString(doc));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("[a-z]+:.*")) {
          continue;
        }
        String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
        Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(doc + ": " + target + " (no such file)");
        } else if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
          broken.add(doc + ": " + target + " (no such heading)");
        }
      }
    }
    assertThat(broken).isEmpty();
  }

  @Test
  void theReadmeIsShortEnoughToReadToTheEnd() throws IOException {
    assertThat(Files.readAllLines(Path.of("README.md"))).hasSizeLessThanOrEqualTo(260);
  }

  @Test
  void everyCommandIsInTheReadmeAndTheCommandsDocument() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    String commands = Files.readString(Path.of("docs/commands.md"));
    for (String name : new CommandLine(new Main()).getSubcommands().keySet()) {
      if (name.equals("help")) {
        continue;
      }
      assertThat(readme).as("README lists shmguard %s", name).contains("`shmguard " + name);
      assertThat(commands).as("docs/commands.md describes shmguard %s", name).contains("shmguard " + name);
    }
  }

  @Test
  void everyJournalEventIsDescribedWithWhatToDo() throws Exception {
    String events = Files.readString(Path.of("docs/events.md"));
    String guide = Files.readString(Path.of("docs/operator-guide.md"));
    String catalog = Files.readString(Path.of("systemd/shmguard.catalog"));
    for (String label : eventLabels()) {
      assertThat(events).as("docs/events.md row for %s", label).contains("| `" + label + "` |");
      assertThat(guide).as("what to do about %s in docs/operator-guide.md", label).contains("`" + label + "`");
    }
    assertThat(catalog).isNotEmpty();
  }

  private static List<String> eventLabels() throws IOException {
    // The vocabulary may move between packages; find the enum by its content, not its place.
    try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      Path source = files.filter(p -> p.getFileName().toString().equals("EventKind.java")).findFirst().orElseThrow();
      Matcher m = Pattern.compile("\\(\"([a-z_]+)\", \"[0-9a-f]{32}\"").matcher(Files.readString(source));
      List<String> labels = new ArrayList<>();
      while (m.find()) {
        labels.add(m.group(1));
      }
      assertThat(labels).isNotEmpty();
      return labels;
    }
  }

  private static List<Path> documents() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(Path.of("README.md").toAbsolutePath()));
    try (Stream<Path> files = Files.list(Path.of("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().map(Path::toAbsolutePath).forEach(docs::add);
    }
    return docs;
  }

  /** GitHub's anchors: headings lower-cased, punctuation dropped, spaces turned into hyphens. */
  private static Set<String> anchors(Path doc) throws IOException {
    Set<String> anchors = new HashSet<>();
    boolean fenced = false;
    for (String line : Files.readAllLines(doc)) {
      if (line.startsWith("```")) {
        fenced = !fenced;
      } else if (!fenced && line.startsWith("#")) {
        String text = line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT);
        anchors.add(text.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
      }
    }
    return anchors;
  }
}
