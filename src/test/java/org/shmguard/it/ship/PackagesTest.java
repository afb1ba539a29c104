package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * The .deb and .rpm hold what an operator installs, in the places each distribution expects, and
 * the distributions' own checkers find no errors in them.
 */
class PackagesTest {
  private static final List<String> COMMON = List.of(
      "/usr/bin/shmguard",
      "/usr/share/shmguard/shmguard.jar",
      "/usr/share/shmguard/make-cds-archive",
      "/usr/share/shmguard/shmguard_client.py",
      "/etc/shmguard/shmguard.yaml",
      "/usr/share/man/man1/shmguard.1.gz",
      "/usr/share/man/man1/shmguard-launch.1.gz",
      "/usr/share/man/man5/shmguard.yaml.5.gz",
      "/usr/share/doc/shmguard/README.md",
      "/usr/share/doc/shmguard/docs/configuration.md",
      "/usr/share/doc/shmguard/docs/operator-guide.md",
      "/usr/share/bash-completion/completions/shmguard",
      "/usr/share/doc/shmguard/copyright",
      "/usr/share/doc/shmguard/changelog.gz",
      "/usr/share/doc/shmguard/NOTICE",
      "/usr/share/shmguard/slurm/epilog",
      "/usr/share/shmguard/slurm/shmguard.nhc",
      "/usr/share/shmguard/prometheus/shmguard-alerts.yaml",
      "/usr/share/shmguard/node-problem-detector/shmguard-full.json",
      "/usr/share/shmguard/node-problem-detector/shmguard-leak.json",
      "/usr/share/shmguard/node-problem-detector/shmguard-down.json",
      "/usr/share/shmguard/nvsentinel/shmguard-values.yaml",
      "/usr/share/shmguard/grafana/shmguard-dashboard.json",
      "/usr/share/shmguard/systemd/remote-metrics.conf",
      "/usr/share/shmguard/oci-hook",
      "/usr/share/shmguard/oci-runtime",
      "/usr/share/shmguard/shmguard_oci_hook.py",
      "/usr/share/shmguard/oci/shmguard-shm.json",
      "/etc/cdi/shmguard.yaml");

  /** The fleet monitoring files of the tree and where both packages install them. */
  private static final Map<String, String> MONITORING = Map.of(
      "packaging/prometheus/shmguard-alerts.yaml", "/usr/share/shmguard/prometheus/shmguard-alerts.yaml",
      "packaging/node-problem-detector/shmguard-full.json", "/usr/share/shmguard/node-problem-detector/shmguard-full.json",
      "packaging/node-problem-detector/shmguard-leak.json", "/usr/share/shmguard/node-problem-detector/shmguard-leak.json",
      "packaging/node-problem-detector/shmguard-down.json", "/usr/share/shmguard/node-problem-detector/shmguard-down.json",
      "packaging/nvsentinel/shmguard-values.yaml", "/usr/share/shmguard/nvsentinel/shmguard-values.yaml",
      "packaging/grafana/shmguard-dashboard.json", "/usr/share/shmguard/grafana/shmguard-dashboard.json",
      "packaging/systemd/remote-metrics.conf", "/usr/share/shmguard/systemd/remote-metrics.conf",
      "packaging/oci/shmguard-shm.json", "/usr/share/shmguard/oci/shmguard-shm.json",
      "packaging/cdi/shmguard.yaml", "/etc/cdi/shmguard.yaml");

  /** Files other parts of the project provide; once they exist in the tree, the packages must carry them. */
  private static final List<String[]> FROM_TREE = List.of(
      new String[] {"systemd/shmguard.service", "/lib/systemd/system/shmguard.service", "/usr/lib/systemd/system/shmguard.service"},
      new String[] {"systemd/shmguard.socket", "/lib/systemd/system/shmguard.socket", "/usr/lib/systemd/system/shmguard.socket"},
      new String[] {"systemd/shmguard.catalog", "/usr/lib/systemd/catalog/shmguard.catalog", "/usr/lib/systemd/catalog/shmguard.catalog"},
      new String[] {"packaging/bin/shmguard-launch", "/usr/bin/shmguard-launch", "/usr/bin/shmguard-launch"});

  @Test
  void debHoldsTheCommandJarConffileManPageAndCompletion() {
    Packages.requireTool("/usr/bin/dpkg-deb");
    Path deb = Packages.deb();
    String listing = Cmd.run("dpkg-deb", "--contents", deb.toString());
    for (String f : COMMON) {
      assertThat(listing).as("deb holds " + f).contains(" ." + f + "\n");
    }
    for (String[] f : FROM_TREE) {
      if (Files.exists(Path.of(f[0]))) {
        assertThat(listing).as("deb holds " + f[1]).contains(" ." + f[1] + "\n");
      }
    }
    assertThat(listing).containsPattern("-rwxr-xr-x root/root +\\d+ [-0-9: ]+\\./usr/bin/shmguard\n");
    assertThat(listing).containsPattern("-rwxr-xr-x root/root +\\d+ [-0-9: ]+\\./usr/share/shmguard/slurm/epilog\n");
    assertThat(Cmd.run("dpkg-deb", "--info", deb.toString(), "conffiles")).isEqualTo("/etc/shmguard/shmguard.yaml\n/etc/cdi/shmguard.yaml\n");
    assertThat(listing).containsPattern("-rwxr-xr-x root/root +\\d+ [-0-9: ]+\\./usr/share/shmguard/oci-hook\n");
    assertThat(listing).containsPattern("-rwxr-xr-x root/root +\\d+ [-0-9: ]+\\./usr/share/shmguard/oci-runtime\n");
    assertThat(listing).as("the hook is off: nothing in a hooks.d a runtime reads").doesNotContain("hooks.d");
    assertThat(Cmd.run("dpkg-deb", "--field", deb.toString(), "Depends")).contains("java17-runtime-headless");
    String description = Cmd.run("dpkg-deb", "--field", deb.toString(), "Description").replaceAll("\\s+", " ");
    for (String command : commands()) {
      assertThat(description).as("the description names every command").contains(command);
    }
    if (Files.exists(Path.of("systemd/shmguard.service"))) {
      assertThat(Cmd.run("sh", "-c", "dpkg-deb --fsys-tarfile " + deb + " | tar -xO ./lib/systemd/system/shmguard.service"))
          .as("the packaged unit runs the launcher").contains("\nExecStart=/usr/bin/shmguard daemon\n")
          .contains("\nExecReload=/usr/bin/shmguard reload\n");
    }
  }

  /** The commands shmguard has, as its command line knows them. */
  private static List<String> commands() {
    return new picocli.CommandLine(new org.shmguard.cli.Main()).getSubcommands().keySet().stream()
        .filter(c -> !c.equals("help")).toList();
  }

  @Test
  void rpmHoldsTheSameFilesWithTheConfigMarkedNoreplace() {
    Packages.requireTool("/usr/bin/rpm");
    Path rpm = Packages.rpm();
    String listing = Cmd.run("rpm", "-qp", "--list", rpm.toString());
    for (String f : COMMON) {
      assertThat(listing).as("rpm holds " + f).contains(f + "\n");
    }
    for (String[] f : FROM_TREE) {
      if (Files.exists(Path.of(f[0]))) {
        assertThat(listing).as("rpm holds " + f[2]).contains(f[2] + "\n");
      }
    }
    assertThat(listing).as("the rpm must not own system directories").doesNotContain("/usr/bin\n").doesNotContain("/etc\n");
    assertThat(Cmd.run("rpm", "-qp", "--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\n]", rpm.toString()))
        .contains("/etc/shmguard/shmguard.yaml cn").contains("/etc/cdi/shmguard.yaml cn");
    assertThat(Cmd.run("rpm", "-qp", "--requires", rpm.toString())).contains("java-headless >= 1:17");
    String description = Cmd.run("rpm", "-qp", "--qf", "%{DESCRIPTION}", rpm.toString()).replaceAll("\\s+", " ");
    for (String command : commands()) {
      assertThat(description).as("the description names every command").contains(command);
    }
    assertThat(Cmd.run("rpm", "-qp", "--licensefiles", rpm.toString())).isEqualTo(
        "/usr/share/doc/shmguard/NOTICE\n/usr/share/doc/shmguard/copyright\n/usr/share/licenses/shmguard/LICENSE\n");
    assertThat(Cmd.run("rpm", "-qp", "--qf", "%{LICENSE}", rpm.toString())).startsWith("Apache-2.0 AND ");
    assertThat(Cmd.run("rpm", "-qp", "--qf", "[%{FILENAMES} %{FILEMODES:perms}\n]", rpm.toString()))
        .contains("/usr/share/shmguard/slurm/epilog -rwxr-xr-x\n").contains("/usr/share/shmguard/oci-hook -rwxr-xr-x\n")
        .contains("/usr/share/shmguard/oci-runtime -rwxr-xr-x\n");
    assertThat(Cmd.run("rpm", "-qp", "--scripts", rpm.toString()))
        .contains("systemctl --no-reload preset shmguard.service")
        .contains("systemctl try-restart shmguard.service");
  }

  @Test
  void bothPackagesInstallTheTreesMonitoringFilesUnchanged() throws Exception {
    Packages.requireTool("/usr/bin/dpkg-deb");
    Packages.requireTool("/usr/bin/rpm2cpio");
    Path deb = Packages.deb();
    Path rpm = Packages.rpm();
    for (var f : MONITORING.entrySet()) {
      String tree = Files.readString(Path.of(f.getKey()));
      assertThat(Cmd.run("sh", "-c", "dpkg-deb --fsys-tarfile " + deb + " | tar -xO ." + f.getValue()))
          .as("deb " + f.getValue()).isEqualTo(tree);
      assertThat(Cmd.run("sh", "-c", "rpm2cpio " + rpm + " | cpio --quiet -i --to-stdout ." + f.getValue()))
          .as("rpm " + f.getValue()).isEqualTo(tree);
    }
    try (var npd = Files.list(Path.of("packaging/node-problem-detector"))) {
      assertThat(npd.map(p -> "packaging/node-problem-detector/" + p.getFileName())).allMatch(MONITORING::containsKey);
    }
  }

  /**
   * apt purge and remove, and rpm -e, forget the advice the stopped daemon last wrote: the
   * maintainer scripts as dpkg and rpm run them, on the test sandbox's private /run, with /var/lib
   * and /etc/systemd/system a throw-away tmpfs so nothing of the machine's is touched.
   */
  @Test
  void removeAndPurgeForgetTheAdviceFileTheDaemonLeft(@TempDir Path work) throws Exception {
    Sandbox.require();
    Packages.requireTool("/usr/bin/dpkg-deb");
    Packages.requireTool("/usr/bin/rpm");
    Path postrm = work.resolve("postrm");
    Files.writeString(postrm, Cmd.run("sh", "-c", "dpkg-deb --ctrl-tarfile " + Packages.deb() + " | tar -xO ./postrm"));
    String scripts = Cmd.run("rpm", "-qp", "--scripts", Packages.rpm().toString());
    Matcher m = Pattern.compile("postuninstall scriptlet \\(using /bin/sh\\):\n(.*?)(\n[a-z]+ scriptlet \\(|\\z)", Pattern.DOTALL)
        .matcher(scripts);
    assertThat(m.find()).as(scripts).isTrue();
    Path postun = Files.writeString(work.resolve("postun"), m.group(1) + "\n");

    for (String[] run : List.of(new String[] {postrm.toString(), "purge"}, new String[] {postrm.toString(), "remove"},
        new String[] {postun.toString(), "0"})) {
      Path advice = Files.createDirectories(Path.of("/run/shmguard")).resolve("advice.env");
      Files.writeString(advice, "SHMGUARD_ADVICE=ok\n");
      Cmd.Result r = Cmd.exec("unshare", "-m", "--propagation", "private", "sh", "-c",
          "mount -t tmpfs scratch /var/lib && { [ ! -d /etc/systemd/system ] || mount -t tmpfs scratch /etc/systemd/system; }"
              + " && exec sh \"$0\" \"$1\"", run[0], run[1]);
      assertThat(r.status()).as(String.join(" ", run) + ": " + r.out() + r.err()).isZero();
      assertThat(advice).as(String.join(" ", run)).doesNotExist();
      assertThat(Path.of("/run/shmguard")).as("the emptied directory goes too").doesNotExist();
    }
  }

  @Test
  void bothPackagesHoldEveryDocumentOfTheTree() throws Exception {
    Packages.requireTool("/usr/bin/dpkg-deb");
    Packages.requireTool("/usr/bin/rpm");
    String deb = Cmd.run("dpkg-deb", "--contents", Packages.deb().toString());
    String rpm = Cmd.run("rpm", "-qp", "--list", Packages.rpm().toString());
    try (var docs = Files.list(Path.of("docs"))) {
      for (Path doc : docs.filter(p -> p.toString().endsWith(".md")).toList()) {
        String installed = "/usr/share/doc/shmguard/docs/" + doc.getFileName();
        assertThat(deb).as("deb holds " + installed).contains(" ." + installed + "\n");
        assertThat(rpm).as("rpm holds " + installed).contains(installed + "\n");
      }
    }
  }

  @Test
  void lintianFindsNoErrors() {
    Packages.requireTool("/usr/bin/lintian");
    Cmd.Result r = Cmd.exec("lintian", "--pedantic", Packages.deb().toString());
    assertThat(r.out().lines().filter(l -> l.startsWith("E:")).toList()).as(r.out() + r.err()).isEmpty();
    assertThat(r.status()).as(r.out() + r.err()).isZero();
  }

  @Test
  void rpmlintFindsNoErrors() {
    Packages.requireTool("/usr/bin/rpmlint");
    Cmd.Result r = Cmd.exec("rpmlint", "-c", "packaging/rpm/rpmlint.toml", Packages.rpm().toString());
    assertThat(r.out()).as(r.out() + r.err()).contains(" 0 errors");
  }

  @Test
  void manPageRendersWithoutTroffWarnings() {
    Packages.requireTool("/usr/bin/man");
    Path page = Path.of("target/pkg/root/usr/share/man/man1/shmguard.1.gz");
    Packages.deb();
    Cmd.Result r = Cmd.exec("sh", "-c", "MANWIDTH=80 man --warnings -l " + page + " 2>&1 >/dev/null");
    assertThat(r.out()).as("troff warnings").isEmpty();
    assertThat(Cmd.run("sh", "-c", "MANWIDTH=80 man -l " + page)).contains("shmguard check").contains("shmguard daemon");
  }

  @Test
  void bashCompletionCompletesCommandsAndTheirOptions() {
    Packages.requireTool("/bin/bash");
    Packages.deb();
    String script = "target/pkg/root/usr/share/bash-completion/completions/shmguard";
    String complete = "source " + script + "; COMP_WORDS=($WORDS); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); "
        + "COMP_LINE=\"$WORDS\"; COMP_POINT=${#COMP_LINE}; _complete_shmguard 2>/dev/null; echo \"${COMPREPLY[@]}\"";

    assertThat(Cmd.run("env", "WORDS=shmguard ch", "bash", "-c", complete).trim()).isEqualTo("check");
    assertThat(Cmd.run("env", "WORDS=shmguard scan --j", "bash", "-c", complete).trim()).isEqualTo("--json");
  }

  @Test
  void launcherMaintainerScriptsAndTestScriptsPassShellcheck() {
    Packages.requireTool("/usr/bin/shellcheck");
    Cmd.Result sh = Cmd.exec("shellcheck", "-x", "packaging/bin/shmguard", "packaging/share/make-cds-archive",
        "packaging/share/oci-hook", "packaging/share/oci-runtime", "packaging/deb/control/postinst", "packaging/deb/control/prerm", "packaging/deb/control/postrm",
        "src/test/install/installed-for-real.sh", "bench/jvm-flags.sh", "bench/scan-interleaved.sh", "bench/sandbox.sh",
        "bench/cold-scan.sh", "src/test/containerd/build-cri-tools.sh", "src/test/k8s-apiserver/build-kube-apiserver.sh");
    assertThat(sh.status()).as(sh.out() + sh.err()).isZero();
    Cmd.Result rpm = Cmd.exec("shellcheck", "-s", "sh", "packaging/rpm/post.sh", "packaging/rpm/preun.sh", "packaging/rpm/postun.sh");
    assertThat(rpm.status()).as(rpm.out() + rpm.err()).isZero();
  }
}
