package org.shmguard.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.shmguard.config.ConfigException;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code shmguard} command line. Exit status: 0 ok, 1 a problem found, 2 usage,
 * 70 internal error, 75 (daemon) another daemon already runs, 78 bad configuration (EX_CONFIG).
 */
@Command(name = "shmguard", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
    description = "Keeps every shared-memory tmpfs on a GPU host healthy: finds NCCL segments leaked by dead jobs, proves nobody holds them, and reaps them with evidence.",
    subcommands = {ScanCommand.class, CleanCommand.class, DaemonCommand.class, DoctorCommand.class, AdviseCommand.class, CheckCommand.class, ReloadCommand.class, CdiCommand.class,
        VersionCommand.class, CommandLine.HelpCommand.class},
    footer = {"", "Exit status: 0 ok, 1 a problem found, 2 usage, 70 internal error, 75 (daemon) another daemon already runs, 78 bad configuration.",
        "Configuration: /etc/shmguard/shmguard.yaml (see the README for every key)."})
public final class Main implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_PROBLEM = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_SOFTWARE = 70;
  /** EX_TEMPFAIL: the daemon did not start because another one already runs; worth retrying later. */
  public static final int EXIT_TEMPFAIL = 75;
  public static final int EXIT_CONFIG = 78;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    org.shmguard.nativ.LibraryPath.withoutLdconfig();
    int status;
    try {
      status = run(args);
    } catch (Throwable t) {
      // An Error picocli lets through (a class missing from a trimmed runtime, say) must still end the
      // process: the daemon's socket and metrics threads would otherwise keep it alive, doing nothing.
      System.err.println("shmguard: internal error: " + t);
      t.printStackTrace();
      status = EXIT_SOFTWARE;
    }
    System.exit(status);
  }

  /** Runs a command line and returns its exit status, without exiting. */
  public static int run(String... args) {
    return run(new java.io.PrintWriter(System.out, true), new java.io.PrintWriter(System.err, true), args);
  }

  /** Runs a command line with its output going to {@code out} and {@code err}; returns the exit status. */
  public static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
    quietLogging();
    CommandLine cli = new CommandLine(new Main());
    cli.setOut(out);
    cli.setErr(err);
    cli.setUsageHelpWidth(100);
    cli.setParameterExceptionHandler(new UsageErrors());
    cli.setExecutionExceptionHandler((ex, cmd, parsed) -> {
      if (ex instanceof ConfigException ce) {
        for (String line : ce.lines()) {
          cmd.getErr().println("shmguard: bad configuration: " + line);
        }
        return EXIT_CONFIG;
      }
      cmd.getErr().println("shmguard: internal error: " + ex);
      ex.printStackTrace(cmd.getErr());
      return EXIT_SOFTWARE;
    });
    try {
      return cli.execute(args);
    } finally {
      // print() does not flush an autoflush writer, and main() exits right after.
      out.flush();
      err.flush();
    }
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required: scan, clean, check, doctor, advise, daemon or version");
  }

  /** One-shot commands print their results; log lines below a warning would only get in the way. */
  private static void quietLogging() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    if (System.getProperty("logback.configurationFile") == null) {
      root.setLevel(Level.WARN);
    }
  }

  static void setLogLevel(String level) {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(level, Level.INFO));
  }

  /** The version from the jar's manifest, else from the build's version.properties (a build without a jar). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      if (v == null) {
        try (java.io.InputStream in = Main.class.getResourceAsStream("version.properties")) {
          if (in != null) {
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            String built = p.getProperty("version");
            v = built == null || built.startsWith("${") ? null : built;
          }
        } catch (java.io.IOException e) {
          v = null;
        }
      }
      return new String[] {"shmguard " + (v == null ? "(development build)" : v)};
    }
  }
}
