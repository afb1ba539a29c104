package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.PyClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The cold path: packaging/bin/shmguard run as root while a real `shmguard daemon` runs answers
 * `scan`, `scan --json` and `check` from the daemon's last pass through the python client, with no
 * JVM; an ordinary user, a missing daemon, or --local get a scan of their own in a JVM.
 */
class ColdPathTest {
  private static final Path LAUNCHER = Path.of("packaging/bin/shmguard").toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();

  private Path dir;
  private Path socket;
  private Path jvmRuns;
  private Path java;
  private final List<AutoCloseable> cleanup = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    PyClient.require();
    dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "cold-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // uid 65534 reaches the socket
    socket = dir.resolve("advice.sock");
    jvmRuns = dir.resolve("jvm-runs");
    // The launcher's java: notes each start, then runs the command line from this build.
    java = dir.resolve("java");
    Files.writeString(java, "#!/bin/sh\necho started >> '" + jvmRuns + "'\n"
        + "while [ $# -gt 0 ] && [ \"$1\" != org.shmguard.cli.Main ]; do shift; done; shift\n"
        + "exec '" + Sandbox.javaBinary() + "' -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp '"
        + System.getProperty("java.class.path") + "' org.shmguard.cli.Main \"$@\"\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).close();
    }
  }

  record Run(int status, String out, String err, int jvmStarts) {
    JsonNode json() throws IOException {
      return JSON.readTree(out);
    }
  }

  /** packaging/bin/shmguard with {@code args}, as {@code prefix} (setpriv ...) if given. */
  private Run launcher(List<String> prefix, String... args) throws Exception {
    long before = jvmStarts();
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(LAUNCHER.toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().put("SHMGUARD_ADVICE_SOCKET", socket.toString());
    pb.environment().put("SHMGUARD_CLIENT", PyClient.CLIENT.toString());
    pb.environment().put("SHMGUARD_JAVA", java.toString());
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("shmguard " + String.join(" ", args) + " did not finish in 120 s");
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8),
        (int) (jvmStarts() - before));
  }

  private Run launcher(String... args) throws Exception {
    return launcher(List.of(), args);
  }

  private long jvmStarts() throws IOException {
    return Files.exists(jvmRuns) ? Files.readAllLines(jvmRuns).size() : 0;
  }

  private static JsonNode segment(JsonNode scan, String name) {
    for (JsonNode seg : scan.path("segments")) {
      if (seg.path("name").asText().equals(name)) {
        return seg;
      }
    }
    return JSON.createObjectNode();
  }

  private TmpfsMount mount() {
    TmpfsMount m = TmpfsMount.create("size=4m,mode=1777");
    cleanup.add(m);
    return m;
  }

  private Path startDaemon(TmpfsMount shm) throws Exception {
    // /dev/shm too (the sandbox's own): what `advise` asks about
    Path config = TestConfig.write("mounts: [" + shm.path() + ", /dev/shm]\nreap:\n  dryRun: true\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\nadvice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n");
    Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
    cleanup.add(() -> {
      daemon.destroy();
      assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
    });
    // "unavailable" until the first pass
    Eventually.answered(() -> AdviceClient.ask(socket, "SCAN v1", Duration.ofSeconds(10), 1 << 20));
    return config;
  }

  @Test
  void rootsScanAndCheckAnswerFromTheDaemonWithoutAJvm() throws Exception {
    TmpfsMount shm = mount();
    Path seg = shm.createSegment("nccl-cold01", 8192);
    try (Holder holder = Holder.start("fd", seg.toString())) {
      startDaemon(shm);
      // the daemon's pass that sees the holder
      JsonNode doc = Eventually.answered(() -> {
        JsonNode d = segment(JSON.readTree(AdviceClient.ask(socket, "SCAN v1 format=json", Duration.ofSeconds(10), 1 << 20)),
            "nccl-cold01");
        if (d.path("holders").isEmpty()) {
          throw new IOException("no pass with the holder yet");
        }
        return d;
      });
      assertThat(doc.at("/holders/0/pid").asInt()).isEqualTo(holder.pid());

      Run json = launcher("scan", "--json");
      assertThat(json.status()).as(json.err()).isZero();
      assertThat(json.jvmStarts()).as("answered without a JVM").isZero();
      JsonNode scan = json.json();
      assertThat(scan.at("/source/daemon").asBoolean()).isTrue();
      assertThat(scan.at("/source/stale").asBoolean()).isFalse();
      assertThat(scan.at("/source/passAt").asText()).isEqualTo(scan.path("takenAt").asText());
      assertThat(segment(scan, "nccl-cold01").path("verdict").asText()).isEqualTo("held");
      assertThat(segment(scan, "nccl-cold01").at("/holders/0/pid").asInt()).isEqualTo(holder.pid());

      Run text = launcher("scan");
      assertThat(text.status()).as(text.err()).isZero();
      assertThat(text.jvmStarts()).isZero();
      assertThat(text.out().lines().findFirst().orElse("")).matches("From the shmguard daemon's last pass, at "
          + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ; shmguard scan --local makes a fresh one here");
      assertThat(text.out()).contains("nccl-cold01", "held", holder.pid() + " java");

      Run check = launcher("check");
      assertThat(check.jvmStarts()).isZero();
      assertThat(check.status()).as(check.out()).isZero();
      assertThat(check.out()).hasLineCount(1).startsWith("ok");

      Run advise = launcher("advise", "--local-ranks", "4", "--nccl-version", "2.21.5");
      assertThat(advise.jvmStarts()).isZero();
      assertThat(advise.status()).as(advise.err()).isZero();
      assertThat(advise.out()).contains("SHMGUARD_ADVICE=");

      // An option the client does not know goes to the command itself, which says what is wrong.
      Run bad = launcher("scan", "--jsn");
      assertThat(bad.jvmStarts()).isEqualTo(1);
      assertThat(bad.status()).isEqualTo(2);
      assertThat(bad.err()).contains("--jsn");

      // The JVM path asks the daemon too: --daemon-only is the command's own option.
      Run viaJvm = launcher("scan", "--json", "--daemon-only");
      assertThat(viaJvm.status()).as(viaJvm.err()).isZero();
      assertThat(viaJvm.jvmStarts()).isEqualTo(1);
      assertThat(viaJvm.json().at("/source/daemon").asBoolean()).isTrue();

      // --local: a pass of the command's own, which says why.
      Run local = launcher("scan", "--json", "--local");
      assertThat(local.status()).as(local.err()).isZero();
      assertThat(local.jvmStarts()).isEqualTo(1);
      assertThat(local.json().at("/source/daemon").asBoolean()).isFalse();
      assertThat(local.json().at("/source/why").asText()).isEqualTo("--local");
    }
  }

  @Test
  void theDaemonsAnswerCallsAFileLeakedOnceItsHoldersExitedWhereALocalScanCannot() throws Exception {
    TmpfsMount shm = mount();
    Path seg = shm.createSegment("nccl-exited", 8192);
    Path config;
    try (Holder holder = Holder.start("fd", seg.toString())) {
      config = startDaemon(shm);
      Eventually.answered(() -> held(segment(JSON.readTree(
          AdviceClient.ask(socket, "SCAN v1 format=json", Duration.ofSeconds(10), 1 << 20)), "nccl-exited")));
    }
    JsonNode fromDaemon = Eventually.answered(() -> {
      JsonNode d = JSON.readTree(launcher("scan", "--json").out());
      if (!segment(d, "nccl-exited").path("verdict").asText().equals("leaked")) {
        throw new IOException("the daemon has not judged the exit yet");
      }
      return d;
    });
    assertThat(fromDaemon.at("/source/daemon").asBoolean()).isTrue();
    assertThat(segment(fromDaemon, "nccl-exited").path("lastHolders")).isNotEmpty();
    assertThat(segment(fromDaemon, "nccl-exited").has("daemonMayDiffer")).isFalse();
    assertThat(fromDaemon.path("notes")).isEmpty();

    // The same file, by a pass of the command's own (--config: the daemon's pass does not apply): in its grace, marked.
    JsonNode local = launcher("scan", "--json", "-c", config.toString()).json();
    assertThat(local.at("/source/why").asText()).startsWith("--config");
    assertThat(segment(local, "nccl-exited").path("verdict").asText()).isEqualTo("grace");
    assertThat(segment(local, "nccl-exited").path("daemonMayDiffer").asBoolean()).isTrue();
    assertThat(local.path("notes").toString()).contains("no holder history");
  }

  private static String held(JsonNode segment) throws IOException {
    if (segment.path("holders").isEmpty()) {
      throw new IOException("no pass with the holder yet");
    }
    return "held";
  }

  @Test
  void anOrdinaryUserGetsNoOtherUsersDetailsFromTheDaemon() throws Exception {
    TmpfsMount shm = mount();
    Path seg = shm.createSegment("nccl-rootjob", 8192);
    try (Holder holder = Holder.start("fd", seg.toString())) {
      startDaemon(shm);
      List<String> nobody = List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups");

      // Asked directly, the daemon refuses.
      List<String> ask = new ArrayList<>(nobody);
      ask.addAll(List.of(PyClient.PYTHON.toString(), "-I", "-S", PyClient.CLIENT.toString(), "scan", "--json",
          "--socket", socket.toString()));
      Process p = new ProcessBuilder(ask).redirectErrorStream(true).start();
      String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor()).as(said).isEqualTo(1);
      assertThat(said).contains("denied", "SCAN shows every user's processes and only root may ask it")
          .doesNotContain("nccl-rootjob").doesNotContain(Integer.toString(holder.pid()));

      // Through the launcher, the scan is the user's own, in a JVM (here one that only says so).
      Files.writeString(java, "#!/bin/sh\necho 'a scan of its own'\n");
      Run own = launcher(nobody, "scan", "--json");
      assertThat(own.status()).as(own.err()).isZero();
      assertThat(own.out()).isEqualTo("a scan of its own\n");
      assertThat(Files.readString(dir.resolve("daemon.log"))).contains("refused \"SCAN v1 format=json\"");
    }
  }

  @Test
  void withoutADaemonScanAndCheckScanHere() throws Exception {
    Path config = TestConfig.write("mounts: [" + mount().path() + "]\nreap:\n  requireHostPidNamespace: false\n");

    Run scan = launcher("scan", "--json");
    assertThat(scan.status()).as(scan.err()).isZero();
    assertThat(scan.jvmStarts()).isEqualTo(1);
    assertThat(scan.json().at("/source/daemon").asBoolean()).isFalse();
    assertThat(scan.json().at("/source/why").asText()).isEqualTo("no daemon answers on " + socket);

    Run check = launcher("check", "-c", config.toString());
    assertThat(check.jvmStarts()).isEqualTo(1);
    assertThat(check.status()).as(check.out()).isZero();

    Run only = launcher("scan", "--daemon-only");
    assertThat(only.status()).isEqualTo(1);
    assertThat(only.err()).contains("no scan from the daemon: no daemon answers on " + socket);
  }

  @Test
  void aPassOlderThanTheStaleLimitIsMarkedStale() throws Exception {
    TmpfsMount shm = mount();
    Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system()).judge();
    Clock hourLater = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none())
        .answerScans(new ScanAnswer(Duration.ofSeconds(120), hourLater));
    AdviceServer server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();
    cleanup.add(server);

    Run json = launcher("scan", "--json");
    assertThat(json.jvmStarts()).isZero();
    assertThat(json.json().path("source").toString())
        .isEqualTo("{\"daemon\":true,\"passAt\":\"" + j.snapshot().takenAt() + "\",\"stale\":true,\"staleAfterSeconds\":120}");
    Run text = launcher("scan");
    assertThat(text.out().lines().findFirst().orElse("")).contains(": STALE, older than 120s");
  }

  @Test
  void aPassListingMoreFilesThanTheDaemonRendersIsRefusedAndTheCommandScansItself() throws Exception {
    TmpfsMount shm = mount();
    shm.createSegment("nccl-one", 4096);
    shm.createSegment("nccl-two", 4096);
    Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system()).judge();
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none())
        .answerScans(new ScanAnswer(Duration.ofSeconds(120), Clock.systemUTC(), 1));
    cleanup.add(AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start());

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> AdviceClient.ask(socket, "SCAN v1", Duration.ofSeconds(10)))
        .isInstanceOf(ProtocolException.class).hasMessageContaining("the last pass lists 2 files, more than the 1");
    Run only = launcher("scan", "--daemon-only");
    assertThat(only.jvmStarts()).isEqualTo(1);
    assertThat(only.status()).isEqualTo(1);
    assertThat(only.err()).contains("the daemon answered unavailable: the last pass lists 2 files");
  }
}
