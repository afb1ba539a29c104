package org.shmguard.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command line shmguard cannot parse, answered as the tools operators know answer it: one line
 * that says what is wrong (with the nearest command or option when it looks like a typo), one
 * line that says where the usage is, and exit status 2; never the whole usage text.
 *
 * <pre>
 * shmguard: unknown command 'scna'; did you mean 'scan'?
 * Run 'shmguard --help' for the commands.
 * </pre>
 */
final class UsageErrors implements CommandLine.IParameterExceptionHandler {
  @Override
  public int handleParseException(CommandLine.ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(cmd.getCommandSpec().qualifiedName() + ": " + problem(ex));
    err.println(pointer(cmd.getCommandSpec()));
    return Main.EXIT_USAGE;
  }

  /** The one sentence: what was not understood, and what was probably meant. */
  static String problem(CommandLine.ParameterException ex) {
    CommandSpec spec = ex.getCommandLine().getCommandSpec();
    if (ex instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      String typed = u.getUnmatched().get(0);
      if (typed.startsWith("-")) {
        String name = typed.contains("=") ? typed.substring(0, typed.indexOf('=')) : typed;
        for (CommandLine sub : spec.subcommands().values()) {
          if (sub.getCommandSpec().findOption(name) != null) {
            return "the option '" + name + "' goes after a command, as in '" + sub.getCommandSpec().qualifiedName() + " " + name + "'";
          }
        }
        return "unknown option '" + name + "'" + meant(name, optionNames(spec));
      }
      if (!spec.subcommands().isEmpty()) {
        return "unknown command '" + typed + "'" + meant(typed, commandNames(spec));
      }
      return "unexpected argument '" + typed + "'; " + spec.name() + " takes options only";
    }
    String message = ex.getMessage() == null ? "cannot parse the command line" : ex.getMessage();
    return Character.toLowerCase(message.charAt(0)) + message.substring(1);
  }

  private static String meant(String typed, List<String> known) {
    String near = Suggestions.closest(typed, known);
    return near == null ? "" : "; did you mean '" + near + "'?";
  }

  private static String pointer(CommandSpec spec) {
    String name = spec.qualifiedName();
    return spec.subcommands().isEmpty() ? "Run '" + name + " --help' for its options."
        : "Run '" + name + " --help' for the commands.";
  }

  private static List<String> optionNames(CommandSpec spec) {
    List<String> names = new ArrayList<>();
    for (OptionSpec o : spec.options()) {
      if (!o.hidden()) {
        names.addAll(List.of(o.names()));
      }
    }
    return names;
  }

  private static List<String> commandNames(CommandSpec spec) {
    List<String> names = new ArrayList<>();
    spec.subcommands().forEach((n, c) -> {
      if (!c.getCommandSpec().usageMessage().hidden()) {
        names.add(n);
      }
    });
    return names;
  }
}
