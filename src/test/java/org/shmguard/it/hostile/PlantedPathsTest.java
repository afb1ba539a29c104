package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.it.advice.AskProcess;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A real daemon (its own JVM, under the unit's UMask=0077) against links, FIFOs and an ordinary
 * user's socket planted at every path it writes: the node_exporter textfile, advice.env, the
 * advice socket and its directory, before it starts and re-planted in a loop while it writes.
 * What a user would check: the root-only victim file keeps its content and mode, the daemon keeps
 * reaping, nothing hangs, clients get the daemon's own answer, and the modes are as shipped.
 */
class PlantedPathsTest {
  private static final String NOBODY = "65534";
  private final List<Process> started = new ArrayList<>();
  private Path base;
  private Path victim;
  private Path home;
  private Path classes;
  private Path evilSocket;
  private String evilSocketMode;
  private TmpfsMount shm;

  @BeforeEach
  void setUp() throws Exception {
    Sandbox.require();
    base = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "planted-");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    victim = Files.writeString(Files.createDirectory(base.resolve("secrets")).resolve("victim"), "root only\n");
    Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
    home = Files.createDirectory(base.resolve("home"));
    Cmd.run("chown", NOBODY + ":" + NOBODY, home.toString());
    classes = Files.createDirectory(base.resolve("classes"));
    copyClass(ImpostorSocket.class);
    copyClass(AskProcess.class);
    Cmd.run("chmod", "-R", "a+rX", classes.toString());
    evilSocket = home.resolve("evil.sock");
    Process impostor = start(nobody(Sandbox.javaBinary(), "-cp", classes.toString(), ImpostorSocket.class.getName(),
        evilSocket.toString()));
    String first = new BufferedReader(new InputStreamReader(impostor.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(first).as("the impostor listens").isEqualTo("listening");
    evilSocketMode = mode(evilSocket);
    assertThat(AdviceClient.ask(evilSocket, "PING", Duration.ofSeconds(30))).as("the impostor answers")
        .isEqualTo("SHMGUARD_ADVICE=impostor\n");
    shm = TmpfsMount.create("size=8m,mode=1777");
  }

  @AfterEach
  void tearDown() throws Exception {
    for (Process p : started) {
      p.destroy();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
    if (shm != null) {
      shm.close();
    }
    if (base != null) {
      Cmd.run("rm", "-rf", base.toString());
    }
  }

  @Test
  void everythingPlantedInRootsDirectoriesIsReplacedNeverFollowedBeforeStartAndWhileItWrites() throws Exception {
    Path run = Files.createDirectories(base.resolve("run/shmguard"));
    Path socket = run.resolve("advice.sock");
    Path envFile = run.resolve("advice.env");
    Path textDir = Files.createDirectory(base.resolve("textfiles"));
    Path textfile = textDir.resolve("shmguard.prom");
    Files.createSymbolicLink(socket, evilSocket);
    Files.createSymbolicLink(envFile, victim);
    Cmd.run("mkfifo", textfile.toString());
    Process daemon = startDaemon(socket, envFile, textfile);
    // shmguard once wrote the textfile through ".NAME.PID.tmp": a FIFO there froze its worker.
    Path oldTemp = textDir.resolve(".shmguard.prom." + daemon.pid() + ".tmp");
    Cmd.run("mkfifo", oldTemp.toString());

    // While the daemon rewrites the textfile after every pass, re-plant a link to the victim and a
    // FIFO at its name as fast as a shell can.
    Process race = start(List.of("sh", "-c", "while :; do ln -sfn \"$1\" \"$2\"; rm -f \"$2\"; mkfifo \"$2\"; rm -f \"$2\"; done",
        "race", victim.toString(), textfile.toString()));
    Path leak = shm.createSegment("nccl-Planted01", 4096);
    Eventually.until("the daemon reaps a leak while the race runs", Duration.ofSeconds(90), () -> !Files.exists(leak));
    String answer = askOnceReady(socket, "ADVISE v1 ranks=4 nccl=2.21.5 dev=" + shm.dev());
    Thread.sleep(3000); // a few more passes, each writing the textfile, under the race
    race.destroy();
    assertThat(race.waitFor(30, TimeUnit.SECONDS)).isTrue();

    assertThat(answer).as("the daemon's answer, not the impostor's").contains("SHMGUARD_DEV=" + shm.dev())
        .doesNotContain("impostor");
    Eventually.until("the textfile is the daemon's again", Duration.ofSeconds(60),
        () -> Files.isRegularFile(textfile, LinkOption.NOFOLLOW_LINKS) && read(textfile).contains("shmguard_passes_total"));
    assertThat(mode(textfile)).isEqualTo("rw-r--r--");
    assertThat(Files.getAttribute(textfile, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0);
    Eventually.until("advice.env is the daemon's", Duration.ofSeconds(60),
        () -> Files.isRegularFile(envFile, LinkOption.NOFOLLOW_LINKS));
    assertThat(read(envFile)).contains("SHMGUARD_ADVICE=");
    assertThat(mode(envFile)).isEqualTo("rw-r--r--");
    assertThat(Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0140666);
    assertThat(mode(run)).isEqualTo("rwxr-xr-x");
    Cmd.Result asNobody = Cmd.exec(nobody(Sandbox.javaBinary(), "-cp", classes.toString(), AskProcess.class.getName(),
        socket.toString(), "ADVISE v1 ranks=4 dev=" + shm.dev()).toArray(String[]::new));
    assertThat(asNobody.out()).as("an ordinary user reaches the daemon's socket: " + asNobody.err())
        .startsWith("OK v1\n").contains("SHMGUARD_DEV=" + shm.dev());
    assertVictimAndUsersFilesUntouched();
    assertThat(daemon.isAlive()).isTrue();
    stop(daemon);
    assertThat(socket).as("the daemon removes its own socket on stop").doesNotExist();
    assertThat(Files.getAttribute(oldTemp, "unix:mode", LinkOption.NOFOLLOW_LINKS)).as("never touched").isEqualTo(010644);
  }

  @Test
  void directoriesAnOrdinaryUserCanWriteAreRefusedAndReapingGoesOn() throws Exception {
    Path tmp = Files.createDirectory(base.resolve("tmp"));
    Cmd.run("chmod", "1777", tmp.toString()); // like /tmp: anyone may add a name
    Path runDir = tmp.resolve("shmguard");
    Path textfile = tmp.resolve("shmguard.prom");
    // advice.env's directory is the user's link to their own directory, holding a link to the
    // victim at advice.env; a FIFO waits at the textfile's name. The socket's directory is missing:
    // the daemon makes it, root's and 0755 whatever the umask.
    Cmd.run(nobody("ln", "-s", home.toString(), runDir.toString()).toArray(String[]::new));
    Cmd.run(nobody("ln", "-s", victim.toString(), home.resolve("advice.env").toString()).toArray(String[]::new));
    Cmd.run(nobody("mkfifo", textfile.toString()).toArray(String[]::new));
    Path socket = base.resolve("run/shmguard/advice.sock");
    Process daemon = startDaemon(socket, runDir.resolve("advice.env"), textfile);
    Path oldTemp = tmp.resolve(".shmguard.prom." + daemon.pid() + ".tmp"); // once written through, links followed
    Cmd.run(nobody("ln", "-s", victim.toString(), oldTemp.toString()).toArray(String[]::new));
    Process race = start(nobody("sh", "-c", "while :; do rm -f \"$2\"; ln -s \"$1\" \"$2\"; rm -f \"$2\"; mkfifo \"$2\"; done",
        "race", victim.toString(), textfile.toString()));

    Path leak = shm.createSegment("nccl-Planted02", 4096);
    Eventually.until("the daemon reaps a leak while the race runs", Duration.ofSeconds(90), () -> !Files.exists(leak));
    Thread.sleep(3000);
    race.destroy();
    assertThat(race.waitFor(30, TimeUnit.SECONDS)).isTrue();

    Path log = base.resolve("daemon.log");
    Eventually.until(() -> "the refusals in the log:\n" + read(log), Duration.ofSeconds(60), () -> {
      String text = read(log);
      return text.contains("cannot write the advice file " + runDir.resolve("advice.env") + ": " + runDir
          + " is a symbolic link owned by uid 65534")
          && text.contains("cannot write the metrics textfile " + textfile + ": " + tmp + " is writable by every user");
    });
    assertThat(read(log).lines().filter(l -> l.contains("cannot write the metrics textfile")))
        .as("said once, not after every pass").hasSize(1);
    assertThat(Files.isSymbolicLink(home.resolve("advice.env"))).isTrue();
    assertThat(Files.isSymbolicLink(oldTemp)).isTrue();
    assertThat(mode(socket.getParent())).isEqualTo("rwxr-xr-x");
    assertThat(mode(socket.getParent().getParent())).isEqualTo("rwxr-xr-x");
    assertThat(Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0140666);
    assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(30))).isEqualTo("pong\n");
    assertVictimAndUsersFilesUntouched();
    assertThat(daemon.isAlive()).isTrue();
    stop(daemon);
  }

  /** The daemon's answer, asked again while it says its first pass has not finished. */
  private static String askOnceReady(Path socket, String request) throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        return AdviceClient.ask(socket, request, Duration.ofSeconds(30));
      } catch (org.shmguard.advice.ProtocolException e) {
        if (!e.getMessage().contains("first pass") || attempt > 600) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private void assertVictimAndUsersFilesUntouched() throws IOException {
    assertThat(Files.isRegularFile(victim, LinkOption.NOFOLLOW_LINKS)).isTrue();
    assertThat(victim).hasContent("root only");
    assertThat(mode(victim)).isEqualTo("rw-------");
    assertThat(Files.getAttribute(victim, "unix:uid")).isEqualTo(0);
    assertThat(mode(evilSocket)).as("the user's socket is not chmod'ed").isEqualTo(evilSocketMode);
    assertThat(Files.getAttribute(evilSocket, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(65534);
  }

  private Process startDaemon(Path socket, Path envFile, Path textfile) throws IOException {
    // The sandbox's /dev/shm too, for advice.env (about the host's /dev/shm); only this test's
    // leaks match the pattern.
    Path config = TestConfig.write("mounts: [/dev/shm, " + shm.path() + "]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
        + "  patterns: [\"nccl-Planted*\"]\n"
        + "daemon:\n  interval: 1s\nadvice:\n  socket: " + socket + "\n  envFile: " + envFile + "\n"
        + "metrics:\n  listen: \"\"\n  textfile: " + textfile + "\n");
    // UMask=0077 as in the shipped unit: every mode must be set explicitly.
    Process p = new ProcessBuilder("sh", "-c", "umask 077; exec \"$@\"", "daemon", Sandbox.javaBinary(),
        "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon",
        "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(base.resolve("daemon.log").toFile()).start();
    started.add(p);
    return p;
  }

  private void stop(Process daemon) throws InterruptedException {
    daemon.destroy(); // SIGTERM, as systemd stops it
    assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(daemon.exitValue()).as(read(base.resolve("daemon.log"))).isZero();
  }

  private Process start(List<String> command) throws IOException {
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    started.add(p);
    return p;
  }

  private static List<String> nobody(String... command) {
    List<String> c = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups"));
    c.addAll(List.of(command));
    return c;
  }

  private void copyClass(Class<?> c) throws Exception {
    String file = c.getName().replace('.', '/') + ".class";
    Path to = classes.resolve(file);
    Files.createDirectories(to.getParent());
    Files.copy(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).resolve(file), to,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return "";
    }
  }

  private static String mode(Path p) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }
}
