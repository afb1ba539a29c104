package org.shmguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;

/** What an operator sees on a mistyped command line: two short lines and exit 2, as git or systemctl answer. */
class CommandLineErrorsTest {

  @Test
  void aMistypedCommandGetsTheNearestCommandAndAPointerToHelpNotTheUsage() {
    CliRun run = CliRun.of("scna");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).isEqualTo("shmguard: unknown command 'scna'; did you mean 'scan'?\n"
        + "Run 'shmguard --help' for the commands.\n");
  }

  @Test
  void aWordLikeNoCommandGetsNoSuggestion() {
    CliRun run = CliRun.of("frobnicate");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).isEqualTo("shmguard: unknown command 'frobnicate'\nRun 'shmguard --help' for the commands.\n");
  }

  @Test
  void aMistypedOptionGetsTheNearestOptionOfThatCommand() {
    CliRun scan = CliRun.of("scan", "--jsno");
    CliRun clean = CliRun.of("clean", "--dry-rn");

    assertThat(scan.status()).isEqualTo(2);
    assertThat(scan.err()).isEqualTo("shmguard scan: unknown option '--jsno'; did you mean '--json'?\n"
        + "Run 'shmguard scan --help' for its options.\n");
    assertThat(clean.status()).isEqualTo(2);
    assertThat(clean.err()).startsWith("shmguard clean: unknown option '--dry-rn'; did you mean '--dry-run'?\n").hasLineCount(2);
  }

  @Test
  void anOptionBeforeTheCommandSaysWhereItGoes() {
    CliRun run = CliRun.of("--config", "/etc/x.yaml", "scan");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).startsWith("shmguard: the option '--config' goes after a command, as in 'shmguard ").hasLineCount(2);
  }

  @Test
  void noCommandSaysWhichThereAre() {
    CliRun run = CliRun.of();

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).startsWith("shmguard: a command is required: scan, clean").contains("version").hasLineCount(2);
  }

  @Test
  void versionCommandAndOptionPrintTheBuiltVersion() throws Exception {
    // <version>${revision}</version>: a release build sets -Drevision, the development build takes the default
    Matcher m = Pattern.compile("<revision>([^<]+)</revision>").matcher(Files.readString(Path.of("pom.xml")));
    assertThat(m.find()).as("the project's version (revision) in pom.xml").isTrue();

    CliRun command = CliRun.of("version");
    CliRun option = CliRun.of("--version");

    assertThat(command.status()).isZero();
    assertThat(command.out()).isEqualTo("shmguard " + m.group(1) + "\n");
    assertThat(option.out()).isEqualTo(command.out());
  }

  @Test
  void suggestionsAllowOneOrTwoEditsNeverForAnUnrelatedWord() {
    var commands = java.util.List.of("scan", "clean", "daemon", "doctor", "advise", "check", "version");

    assertThat(Suggestions.closest("scna", commands)).isEqualTo("scan");
    assertThat(Suggestions.closest("docter", commands)).isEqualTo("doctor");
    assertThat(Suggestions.closest("versoin", commands)).isEqualTo("version");
    assertThat(Suggestions.closest("deamon", commands)).isEqualTo("daemon");
    assertThat(Suggestions.closest("status", commands)).isNull();
    assertThat(Suggestions.closest("-x", java.util.List.of("-h", "-c"))).isNull();
  }

  @Test
  void manPageListsTheVersionCommandAndTheDaemonsDryRun() {
    String man = ManPage.render(new picocli.CommandLine(new Main()).getCommandSpec());

    assertThat(man).contains(".SS \"shmguard version\"");
    String daemon = man.substring(man.indexOf(".SS \"shmguard daemon\""));
    daemon = daemon.substring(0, daemon.indexOf(".SS", 3));
    assertThat(daemon).contains("\\fB\\-\\-dry\\-run\\fR").contains("reap.dryRun");
  }
}
