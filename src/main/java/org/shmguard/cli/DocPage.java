package org.shmguard.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes a man page in troff from one of the project's Markdown documents, so that a page such
 * as shmguard.yaml(5) says exactly what docs/configuration.md says. It knows the Markdown the
 * docs use: headings, paragraphs, lists, fenced code and tables (each table row becomes a tagged
 * paragraph: the first cell is the tag, the others follow with their column names). Run at
 * package build time:
 * {@code java -cp shmguard.jar org.shmguard.cli.DocPage docs/configuration.md shmguard.yaml 5 "File Formats" out}.
 */
public final class DocPage {
  private static final Pattern LINK = Pattern.compile("\\[([^\\]]+)]\\([^)]+\\)");
  private static final Pattern CODE = Pattern.compile("`([^`]+)`");
  private static final Pattern BOLD = Pattern.compile("\\*\\*([^*]+)\\*\\*");

  private DocPage() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 5) {
      System.err.println("usage: DocPage MARKDOWN NAME SECTION TITLE OUTPUT-FILE");
      System.exit(Main.EXIT_USAGE);
    }
    String markdown = Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
    String version = DocPage.class.getPackage().getImplementationVersion();
    Files.writeString(Path.of(args[4]),
        render(markdown, args[1], args[2], args[3], version == null ? "shmguard" : "shmguard " + version),
        StandardCharsets.UTF_8);
  }

  /**
   * The page: its NAME line comes from the document's title (the text after "shmguard: "), its
   * sections from the document's headings.
   */
  static String render(String markdown, String name, String section, String title, String source) {
    List<String> lines = List.of(markdown.split("\n", -1));
    StringBuilder out = new StringBuilder();
    out.append(".TH ").append(name.toUpperCase(java.util.Locale.ROOT)).append(' ').append(section)
        .append(" \"\" \"").append(escape(source)).append("\" \"").append(escape(title)).append("\"\n");
    int i = 0;
    String heading = "";
    while (i < lines.size() && !lines.get(i).startsWith("# ")) {
      i++;
    }
    if (i < lines.size()) {
      heading = lines.get(i).substring(2).trim();
      i++;
    }
    String summary = heading.contains(": ") ? heading.substring(heading.indexOf(": ") + 2) : heading;
    out.append(".SH NAME\n").append(escape(name)).append(" \\- ").append(inline(summary)).append('\n');
    boolean described = false;
    List<String> paragraph = new ArrayList<>();
    while (i < lines.size()) {
      String line = lines.get(i);
      if (line.isBlank()) {
        flush(out, paragraph);
        i++;
      } else if (line.startsWith("```")) {
        flush(out, paragraph);
        i++;
        out.append(".PP\n.RS 4\n.nf\n");
        while (i < lines.size() && !lines.get(i).startsWith("```")) {
          out.append(verbatim(lines.get(i))).append('\n');
          i++;
        }
        out.append(".fi\n.RE\n");
        i++;
      } else if (line.startsWith("#")) {
        flush(out, paragraph);
        int level = line.indexOf(' ');
        String text = inline(line.substring(level + 1).trim());
        if (level <= 2) {
          out.append(".SH \"").append(text.toUpperCase(java.util.Locale.ROOT)).append("\"\n");
          described = true;
        } else {
          out.append(".SS \"").append(text).append("\"\n");
        }
        i++;
      } else if (line.startsWith("|")) {
        flush(out, paragraph);
        List<String> header = cells(line);
        i += 2; // the header and its |---| line
        while (i < lines.size() && lines.get(i).startsWith("|")) {
          List<String> row = cells(lines.get(i));
          out.append(".TP\n").append(inline(row.get(0))).append('\n');
          List<String> rest = new ArrayList<>();
          for (int c = 1; c < row.size(); c++) {
            String label = c < header.size() ? header.get(c) : "";
            rest.add((label.isBlank() || c == row.size() - 1 ? "" : label + ": ") + row.get(c));
          }
          out.append(inline(String.join(". ", rest))).append('\n');
          i++;
        }
      } else if (line.startsWith("- ") || line.matches("\\d+\\. .*")) {
        flush(out, paragraph);
        StringBuilder item = new StringBuilder(line.substring(line.indexOf(' ') + 1));
        i++;
        while (i < lines.size() && lines.get(i).startsWith("  ") && !lines.get(i).isBlank()) {
          item.append(' ').append(lines.get(i).trim());
          i++;
        }
        out.append(".IP \\(bu 2\n").append(inline(item.toString())).append('\n');
      } else {
        if (!described && paragraph.isEmpty()) {
          out.append(".SH DESCRIPTION\n");
          described = true;
        }
        paragraph.add(line.trim());
        i++;
      }
    }
    flush(out, paragraph);
    out.append(".SH SEE ALSO\n.BR shmguard (1)\n");
    return out.toString();
  }

  private static void flush(StringBuilder out, List<String> paragraph) {
    if (!paragraph.isEmpty()) {
      out.append(".PP\n").append(inline(String.join(" ", paragraph))).append('\n');
      paragraph.clear();
    }
  }

  private static List<String> cells(String row) {
    String inner = row.trim();
    inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    for (int k = 0; k < inner.length(); k++) {
      char ch = inner.charAt(k);
      if (ch == '\\' && k + 1 < inner.length() && inner.charAt(k + 1) == '|') {
        cell.append('|');
        k++;
      } else if (ch == '|') {
        cells.add(cell.toString().trim());
        cell.setLength(0);
      } else {
        cell.append(ch);
      }
    }
    cells.add(cell.toString().trim());
    return cells;
  }

  /** Markdown inline text to troff: links lose their target, code and bold become bold. */
  static String inline(String text) {
    String plain = LINK.matcher(text).replaceAll(m -> Matcher.quoteReplacement(m.group(1)));
    String escaped = escape(plain);
    escaped = CODE.matcher(escaped).replaceAll(m -> Matcher.quoteReplacement("\\fB" + m.group(1) + "\\fR"));
    escaped = BOLD.matcher(escaped).replaceAll(m -> Matcher.quoteReplacement("\\fB" + m.group(1) + "\\fR"));
    return escaped.startsWith(".") || escaped.startsWith("'") ? "\\&" + escaped : escaped;
  }

  private static String verbatim(String line) {
    String escaped = escape(line);
    return escaped.startsWith(".") || escaped.startsWith("'") ? "\\&" + escaped : escaped;
  }

  private static String escape(String text) {
    return text.replace("\\", "\\e").replace("-", "\\-");
  }
}
