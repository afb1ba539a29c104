package org.shmguard.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Writes shmguard(1) in troff from the command line's own model, so the man page says exactly
 * what {@code --help} says. Run at package build time:
 * {@code java -cp shmguard.jar org.shmguard.cli.ManPage shmguard.1}.
 */
public final class ManPage {
  private ManPage() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: ManPage OUTPUT-FILE");
      System.exit(Main.EXIT_USAGE);
    }
    Files.writeString(Path.of(args[0]), render(new CommandLine(new Main()).getCommandSpec()), StandardCharsets.UTF_8);
  }

  static String render(CommandSpec root) {
    java.io.StringWriter text = new java.io.StringWriter();
    PrintWriter w = new PrintWriter(text);
    String version = String.join(" ", root.version());
    w.println(".TH SHMGUARD 1 \"\" \"" + esc(version) + "\" \"User Commands\"");
    w.println(".SH NAME");
    w.println("shmguard \\- " + esc(firstSentence(String.join(" ", root.usageMessage().description()))));
    w.println(".SH SYNOPSIS");
    w.println(".B shmguard");
    w.println("\\fICOMMAND\\fR [\\fIOPTIONS\\fR]");
    w.println(".SH DESCRIPTION");
    paragraphs(w, root.usageMessage().description());
    options(w, root);
    w.println(".SH COMMANDS");
    root.subcommands().forEach((name, sub) -> {
      if (name.equals("help") || sub.getCommandSpec().usageMessage().hidden()) {
        return;
      }
      CommandSpec spec = sub.getCommandSpec();
      w.println(".SS \"shmguard " + esc(name) + "\"");
      paragraphs(w, spec.usageMessage().description());
      for (OptionSpec o : spec.options()) {
        option(w, o);
      }
      footer(w, spec);
    });
    w.println(".SH EXIT STATUS");
    footer(w, root);
    w.println(".SH FILES");
    w.println(".TP");
    w.println(".I /etc/shmguard/shmguard.yaml");
    w.println("The configuration; without it shmguard runs on its built-in defaults, which are exactly the shipped file. "
        + "It must be a regular file of at most 256 KiB holding one YAML document; run as root, shmguard reads it only "
        + "when it is owned by root and writable by no one else.");
    w.println(".SH SEE ALSO");
    w.println(".BR journalctl (1),");
    w.println(".BR systemctl (1),");
    w.println(".BR tmpfs (5)");
    w.flush();
    return text.toString();
  }

  private static void options(PrintWriter w, CommandSpec spec) {
    if (spec.options().isEmpty()) {
      return;
    }
    w.println(".SH OPTIONS");
    for (OptionSpec o : spec.options()) {
      option(w, o);
    }
  }

  private static void option(PrintWriter w, OptionSpec o) {
    if (o.hidden()) {
      return;
    }
    w.println(".TP");
    StringBuilder names = new StringBuilder();
    for (String n : o.names()) {
      names.append(names.length() == 0 ? "" : ", ").append("\\fB").append(esc(n)).append("\\fR");
    }
    if (o.arity().max() > 0) {
      names.append(" \\fI").append(esc(o.paramLabel())).append("\\fR");
    }
    w.println(names);
    String description = String.join(" ", o.description()).replace("${DEFAULT-VALUE}", String.valueOf(o.defaultValue()));
    w.println(esc(description));
  }

  private static void footer(PrintWriter w, CommandSpec spec) {
    List<String> lines = List.of(spec.usageMessage().footer()).stream().filter(l -> !l.isBlank()).toList();
    paragraphs(w, lines.toArray(String[]::new));
  }

  private static void paragraphs(PrintWriter w, String[] lines) {
    for (String line : lines) {
      w.println(".PP");
      w.println(esc(line));
    }
  }

  private static String firstSentence(String text) {
    int end = text.indexOf(": ");
    return end > 0 ? text.substring(0, end) : text;
  }

  /** Escapes text for troff: backslashes, hyphens in words, and a leading dot or quote. */
  static String esc(String s) {
    String e = s.replace("\\", "\\e").replace("-", "\\-");
    if (e.startsWith(".") || e.startsWith("'")) {
      e = "\\&" + e;
    }
    return e;
  }
}
