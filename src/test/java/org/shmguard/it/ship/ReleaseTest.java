package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * A release as packaging/release/release makes it (docs/release.md): this tree committed into a
 * throwaway git repository, its changelog given an entry 9.8.7, tagged v9.8.7, released twice with a
 * throwaway gpg key in a temporary GNUPGHOME (never root's keyring). The packages carry the tag's
 * version, the two builds list the same files, the checksums and signatures verify, dnf installs
 * from the yum repository into an installroot checking both its signatures, and the apt repository
 * installs in the booted Debian root of InstalledForRealTest with apt verifying its signature.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReleaseTest {
  private static final String VERSION = "9.8.7";
  private static final String DEB = "shmguard_" + VERSION + "_all.deb";
  private static final String RPM = "shmguard-" + VERSION + "-1.noarch.rpm";
  private static final String JAR = "shmguard-" + VERSION + ".jar";

  private Path work;
  private Path src;
  private String gnupgHome;
  private String key;
  private Path first;
  private Path second;

  @BeforeAll
  void releaseTheSameTagTwice() throws IOException {
    Sandbox.require();
    for (String tool : new String[] {"/usr/bin/git", "/usr/bin/gpg", "/usr/bin/gpgv", "/usr/bin/rpmsign", "/usr/bin/rpmkeys",
        "/usr/bin/apt-ftparchive", "/usr/bin/createrepo_c", "/usr/bin/dpkg-deb", "/usr/bin/mvn"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (Debian: apt-utils, createrepo-c, rpm, gpg; .ci/run installs them)");
    }
    work = Files.createTempDirectory(Path.of("/var/tmp"), "shmguard-release-test.");
    src = work.resolve("src");
    Files.createDirectories(src);
    Cmd.run("sh", "-c", "git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -x -C \"$0\"", src.toString());
    Path changelog = src.resolve("packaging/doc/changelog");
    Files.writeString(changelog, "shmguard (" + VERSION + ") unstable; urgency=medium\n\n  * A test release.\n\n"
        + " -- shmguard tests <tests@example.invalid>  Thu, 26 Nov 2026 12:00:00 +0000\n\n" + Files.readString(changelog));
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "release " + VERSION);
    git("tag", "v" + VERSION);

    Path gnupg = work.resolve("gnupg");
    Files.createDirectory(gnupg, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
    gnupgHome = gnupg.toString();
    gpg("--batch", "--passphrase", "", "--quick-gen-key", "shmguard test release <release@example.invalid>", "rsa3072", "sign", "never");
    key = gpg("--batch", "--with-colons", "--list-secret-keys").lines().filter(l -> l.startsWith("fpr:")).findFirst()
        .orElseThrow().split(":")[9];

    first = release("v" + VERSION, work.resolve("first"));
    second = release("v" + VERSION, work.resolve("second"));
  }

  @AfterAll
  void removeTheKeyAndTheReleases() throws IOException {
    if (gnupgHome != null) {
      Cmd.exec("env", "GNUPGHOME=" + gnupgHome, "gpgconf", "--kill", "all");
    }
    if (work != null) {
      try (Stream<Path> all = Files.walk(work)) {
        for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void packagesJarAndChangelogCarryTheTagsVersionAndNoSnapshot() {
    assertThat(Cmd.run("dpkg-deb", "-f", first.resolve(DEB).toString(), "Version").trim()).isEqualTo(VERSION);
    assertThat(Cmd.run("rpm", "-qp", "--nosignature", "--qf", "%{VERSION}-%{RELEASE}", first.resolve(RPM).toString()))
        .isEqualTo(VERSION + "-1");
    assertThat(Cmd.run(Sandbox.javaBinary(), "-jar", first.resolve(JAR).toString(), "version").trim()).isEqualTo("shmguard " + VERSION);
    String changelog = Cmd.run("sh", "-c", "dpkg-deb --fsys-tarfile \"$0\" | tar -xOf - ./usr/share/doc/shmguard/changelog.gz | gunzip",
        first.resolve(DEB).toString());
    assertThat(changelog.lines().findFirst().orElseThrow()).startsWith("shmguard (" + VERSION + ") ");
    assertThat(Cmd.run("dpkg-deb", "-I", first.resolve(DEB).toString())).doesNotContainIgnoringCase("snapshot");
    assertThat(Cmd.run("rpm", "-qpi", "--nosignature", first.resolve(RPM).toString())).doesNotContainIgnoringCase("snapshot");
    assertThat(Cmd.run("unzip", "-p", first.resolve(JAR).toString(), "META-INF/MANIFEST.MF"))
        .contains("Implementation-Version: " + VERSION).doesNotContainIgnoringCase("snapshot");
  }

  @Test
  void theSameTagReleasedTwiceListsTheSameFilesWithTheSameModesAndOwners() throws IOException {
    for (String list : new String[] {DEB + ".files", RPM + ".files"}) {
      String once = Files.readString(first.resolve(list));
      assertThat(once).as(list).contains(" /usr/bin/shmguard").contains(" /usr/share/shmguard/shmguard.jar");
      assertThat(once.lines().filter(l -> l.endsWith(" /usr/bin/shmguard"))).as(list).singleElement().asString()
          .matches("-rwxr-xr-x root:root [0-9]+ /usr/bin/shmguard");
      assertThat(Files.readString(second.resolve(list))).as(list).isEqualTo(once);
    }
    // docs/release.md: the .deb and the jar are byte for byte the same; the .rpm differs only in its signature,
    // not in the header and payload it signs.
    assertThat(sha256(second.resolve(DEB))).isEqualTo(sha256(first.resolve(DEB)));
    assertThat(sha256(second.resolve(JAR))).isEqualTo(sha256(first.resolve(JAR)));
    String signed = "%{SHA256HEADER} %{PAYLOADDIGEST}";
    assertThat(Cmd.run("rpm", "-qp", "--nosignature", "--qf", signed, second.resolve(RPM).toString()))
        .isEqualTo(Cmd.run("rpm", "-qp", "--nosignature", "--qf", signed, first.resolve(RPM).toString()));
  }

  @Test
  void checksumsCoverTheArtifactsAndTheirSignatureVerifiesWithThePublishedKey() throws IOException {
    Cmd.run("sh", "-c", "cd \"$0\" && sha256sum --quiet -c SHA256SUMS", first.toString());
    String sums = Files.readString(first.resolve("SHA256SUMS"));
    assertThat(sums).contains(DEB).contains(RPM).contains(JAR).contains(DEB + ".files").contains(RPM + ".files");
    String keyring = first.resolve("shmguard-archive-keyring.gpg").toString();
    assertThat(Cmd.exec("gpgv", "--keyring", keyring, first.resolve("SHA256SUMS.asc").toString(), first.resolve("SHA256SUMS").toString())
        .status()).isZero();
    Path forged = work.resolve("SHA256SUMS.forged");
    Files.writeString(forged, sums.replaceFirst("^[0-9a-f]", sums.startsWith("0") ? "1" : "0"));
    assertThat(Cmd.exec("gpgv", "--keyring", keyring, first.resolve("SHA256SUMS.asc").toString(), forged.toString()).status())
        .as("a changed SHA256SUMS fails its signature").isNotZero();
  }

  @Test
  void yumRepositoryHoldsTheSignedPackageAndSignedMetadata() throws IOException {
    Path yum = first.resolve("yum");
    String keyring = first.resolve("shmguard-archive-keyring.gpg").toString();
    assertThat(Cmd.exec("gpgv", "--keyring", keyring, yum.resolve("repodata/repomd.xml.asc").toString(),
        yum.resolve("repodata/repomd.xml").toString()).status()).as("repomd.xml.asc verifies").isZero();
    String primary = Cmd.run("sh", "-c", "zcat \"$0\"/repodata/*-primary.xml.gz", yum.toString());
    assertThat(primary).contains("<name>shmguard</name>").contains("ver=\"" + VERSION + "\" rel=\"1\"")
        .contains("href=\"" + RPM + "\"");

    Path rpmdb = work.resolve("rpmdb");
    Cmd.run("mkdir", "-p", rpmdb.toString());
    String unknown = Cmd.exec("rpmkeys", "--root", rpmdb.toString(), "--checksig", yum.resolve(RPM).toString()).out();
    assertThat(unknown).as("signed, with a key this rpm database lacks").containsIgnoringCase("NOT OK");
    Cmd.run("rpmkeys", "--root", rpmdb.toString(), "--import", first.resolve("shmguard-archive-keyring.asc").toString());
    Cmd.Result known = Cmd.exec("rpmkeys", "--root", rpmdb.toString(), "--checksig", yum.resolve(RPM).toString());
    assertThat(known.status()).as(known.out() + known.err()).isZero();
    assertThat(known.out()).contains("signatures OK").doesNotContain("NOT OK");
  }

  @Test
  void dnfInstallsFromTheYumRepositoryCheckingBothSignatures() {
    for (String tool : new String[] {"/usr/bin/dnf", "/usr/bin/rpmbuild"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (Debian: dnf, rpm; .ci/run installs them)");
    }
    Cmd.Result r = Cmd.exec("env", "TMPDIR=" + work, "src/test/install/dnf-installroot.sh", first.toString());
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out())
        .contains("CHECK dnf refuses the repository's metadata under another key (repo_gpgcheck): ok")
        .contains("CHECK dnf refuses the package under another key (gpgcheck): ok")
        .contains("CHECK dnf installed shmguard " + VERSION + "-1 with repo_gpgcheck and gpgcheck: ok")
        .contains("CHECK rpm -V finds the installed files as packaged: ok")
        .doesNotContain("FAIL");
  }

  @Test
  void aTagWhoseVersionIsNotTheChangelogsNewestEntryIsRefused() {
    git("tag", "v9.8.8");
    Cmd.Result r = releaseResult("v9.8.8", work.resolve("refused"));
    assertThat(r.status()).isNotZero();
    assertThat(r.out() + r.err()).contains("packaging/doc/changelog must start with the entry of version 9.8.8")
        .as("refused before the build").doesNotContain("release: building");
    assertThat(work.resolve("refused")).doesNotExist();
  }

  @Test
  void releaseScriptPassesShellcheck() {
    Packages.requireTool("/usr/bin/shellcheck");
    Cmd.Result sh = Cmd.exec("shellcheck", "packaging/release/release", "src/test/install/dnf-installroot.sh");
    assertThat(sh.status()).as(sh.out()).isZero();
  }

  @Test
  void aptRepositoryInstallsInABootedDebianRootWithItsSignatureVerified() throws Exception {
    for (String tool : new String[] {"/usr/sbin/debootstrap", "/usr/bin/systemd-nspawn", "/usr/bin/nsenter"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (Debian: debootstrap, systemd-container; .ci/run installs them)");
    }
    Process p = new ProcessBuilder("src/test/install/installed-for-real.sh", "--release", first.toString()).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(20, TimeUnit.MINUTES)).as("finished").isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out)
        .contains("CHECK apt refuses the repository under another key (NO_PUBKEY): ok")
        .contains("CHECK apt-get update verified the repository's InRelease with its signed-by keyring: ok")
        .contains("CHECK installed with apt-get install -y, a drop-in placed first, no conffile question: ok")
        .contains("CHECK shmguard version prints the release's version (" + VERSION + "): ok")
        .contains("CHECK the package enabled and started the service (READY reached): ok")
        .contains("CHECK leaked segment reaped by the service: ok")
        .contains("CHECK purged: ok")
        .doesNotContain("FAIL");
  }

  private Path release(String tag, Path out) {
    Cmd.Result r = releaseResult(tag, out);
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.err()).as("each step is told as it starts").contains("release: building " + tag + " (",
        "release: signing shmguard-", "release: making the apt repository", "release: making the yum repository",
        "release: writing SHA256SUMS");
    return out;
  }

  private Cmd.Result releaseResult(String tag, Path out) {
    return Cmd.exec("env", "GNUPGHOME=" + gnupgHome, "TMPDIR=" + work, src.resolve("packaging/release/release").toString(),
        tag, "--key", key, "--out", out.toString());
  }

  private String gpg(String... args) {
    String[] command = Stream.concat(Stream.of("env", "GNUPGHOME=" + gnupgHome, "gpg"), Stream.of(args)).toArray(String[]::new);
    return Cmd.run(command);
  }

  private void git(String... args) {
    String[] command = Stream.concat(Stream.of("env", "GIT_AUTHOR_DATE=2026-11-26T12:00:00Z", "GIT_COMMITTER_DATE=2026-11-26T12:00:00Z",
        "git", "-C", src.toString(), "-c", "user.name=shmguard tests", "-c", "user.email=tests@example.invalid"), Stream.of(args))
        .toArray(String[]::new);
    Cmd.run(command);
  }

  private static String sha256(Path file) {
    return Cmd.run("sha256sum", file.toString()).split(" ")[0];
  }
}
