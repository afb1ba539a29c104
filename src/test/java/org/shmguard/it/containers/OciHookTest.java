package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.cli.Main;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.ContainersDirs;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Podman;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * The OCI hook as podman 4.3 with runc runs it, configured by the shipped hooks.d file
 * (packaging/oci/shmguard-shm.json, its path pointed at this checkout's launcher) placed where
 * podman reads hooks by default, with no {@code --hooks-dir} (/usr/share/containers/oci/hooks.d,
 * a private copy bound over the machine's: {@link ContainersDirs}), and the CDI
 * spec {@code shmguard cdi generate} writes, in the sandbox's own /run/cdi: containers started with
 * {@code --shm-size=64m} and {@code NVIDIA_VISIBLE_DEVICES=0,1,2,3} (no GPU is needed for the
 * hook's decision) see, at their first instruction, the /dev/shm their GPUs call for, within
 * {@code remount.*} and their memory limit; the socket and the advice come through CDI; with the
 * daemon off or silent they start unchanged within the hook's bound; with remounting off nothing
 * is resized and the journal says why.
 */
class OciHookTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String GPUS4 = "NVIDIA_VISIBLE_DEVICES=0,1,2,3";
  private static final long KIB = 1024;
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;
  private static final Path CDI = Path.of("/run/cdi");
  private static final Path CHECKOUT = Path.of("").toAbsolutePath();
  /** systemd/shmguard.service's CapabilityBoundingSet=. */
  private static final String UNIT_CAPS = "+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";

  @Test
  void aGpuContainersShmIsSizedBeforeItsFirstInstructionWithinTheCapsAndItGetsTheSocketThroughCdi() throws Exception {
    Sandbox.require();
    try (Journald journald = Journald.start(); Setup s = Setup.create()) {
      try (Daemon d = s.daemon("remount:\n  enabled: true\n  targetSize: 1G\n  maxSize: 2G\n")) {
        Path client = s.podman.rootfs().resolve("shmguard_client.py");
        Files.copy(CHECKOUT.resolve("packaging/share/shmguard_client.py"), client);
        Run four = s.run(List.of("--shm-size=64m", "-e", GPUS4, "--device", "shmguard.io/advice=socket",
            "-v", "/usr:/usr:ro", "-v", "/lib:/lib:ro", "-v", "/lib64:/lib64:ro"),
            "df -k /dev/shm | tail -1; echo \"socket=$SHMGUARD_ADVICE_SOCKET\"; ls -l \"$SHMGUARD_ADVICE_SOCKET\";"
            + " i=0; until python3 -I -S /shmguard_client.py advise --local-ranks 4 --timeout 2 2>/dev/null; do"
            + " i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.2; done");
        assertThat(four.shmKib()).as(four.out).isEqualTo(GIB / KIB);
        assertThat(four.out).contains("socket=" + d.socket).containsPattern("(?m)^srw-rw-rw-.*" + d.socket + "$")
            .contains("SHMGUARD_SIZE_BYTES=" + GIB).contains("SHMGUARD_ADVICE=");
        JsonNode grown = journal("remount_grown", four.id);
        assertThat(grown.get("MESSAGE").asText()).startsWith("grew podman:" + four.id.substring(0, 12) + ":/dev/shm from 64.0M to 1.0G; options now rw,nosuid,nodev,noexec,relatime rw,size=1048576k");
        assertThat(grown.get("SHM_REASON").asText()).contains("container " + four.id.substring(0, 12) + " (pid ")
            .contains("starts with 4 GPU(s), asked by its OCI hook: 4 GPUs need up to ");
        assertThat(grown.get("PRIORITY").asText()).isEqualTo("5");
        assertThat(read(d.log)).as("the event is the one line for a grow").doesNotContain("remounting podman:").doesNotContain("remounted ");

        Run limited = s.run(List.of("--shm-size=64m", "-e", GPUS4, "--memory=512m"), "df -k /dev/shm | tail -1");
        assertThat(limited.shmKib()).as("capped by its memory limit").isEqualTo(512 * MIB / KIB);
        assertThat(journal("remount_grown", limited.id).get("SHM_REASON").asText()).contains("grow from 64.0M to 512M");

        Run liar = s.run(List.of("--shm-size=64m", "--annotation", "shmguard.io/gpus=10000"), "df -k /dev/shm | tail -1");
        assertThat(liar.shmKib()).as("10,000 GPUs get remount.maxSize").isEqualTo(2 * GIB / KIB);
        assertThat(journal("remount_grown", liar.id).get("SHM_REASON").asText())
            .contains("10000 GPUs (sized as 1024, the most counted) need up to ").contains("capped by remount.maxSize (2147483648 bytes)");

        Run enough = s.run(List.of("--shm-size=2g", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(enough.shmKib()).as("its own --shm-size is enough").isEqualTo(2 * GIB / KIB);
        JsonNode enoughEvent = journal("remount_refused", enough.id);
        assertThat(enoughEvent.get("MESSAGE").asText()).contains("its /dev/shm of 2.0G is already enough for 4 GPUs");
        assertThat(enoughEvent.get("PRIORITY").asText()).as("nothing is wrong: an info, not a warning").isEqualTo("6");
        assertThat(read(d.log)).as("said once, by the event").doesNotContain("already enough");

        Run plain = s.run(List.of("--shm-size=64m"), "df -k /dev/shm | tail -1");
        assertThat(plain.shmKib()).as("no GPU: left alone").isEqualTo(64 * MIB / KIB);
        assertThat(read(d.log)).doesNotContain(plain.id.substring(0, 12));

        // The start latency the hook adds: the same container, with no hook, and with the hook
        // asking a daemon that grows its /dev/shm; interleaved, from podman run to the first output.
        List<Long> bare = new ArrayList<>();
        List<Long> hooked = new ArrayList<>();
        List<Long> bareCpu = new ArrayList<>();
        List<Long> hookedCpu = new ArrayList<>();
        try (Podman noHook = Podman.create()) {
          for (int i = 0; i < 9; i++) {
            bare.add(s.run(noHook, List.of("--shm-size=64m", "-e", GPUS4), "echo started").firstLineMs);
            hooked.add(s.run(List.of("--shm-size=64m", "-e", GPUS4), "echo started").firstLineMs);
            bareCpu.add(s.run(noHook, List.of("--shm-size=64m"), "echo started").firstLineMs);
            hookedCpu.add(s.run(List.of("--shm-size=64m"), "echo started").firstLineMs);
          }
        }
        System.out.printf("podman run to the first instruction, 9 runs each, interleaved: 4 GPUs, no hook %s ms (median %d),"
            + " the hook growing /dev/shm %s ms (median %d); no GPU, no hook %s ms (median %d), the hook %s ms (median %d)%n",
            bare, median(bare), hooked, median(hooked), bareCpu, median(bareCpu), hookedCpu, median(hookedCpu));

        String asUser = Cmd.run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-I", "-S", "-c",
            "import socket; s = socket.socket(socket.AF_UNIX); s.connect('" + d.socket + "');"
            + " s.sendall(b'PREPARE v1 container=" + four.id + " pid=2 gpus=4\\n'); s.shutdown(socket.SHUT_WR);"
            + " print(s.recv(4096).decode())");
        assertThat(asUser).startsWith("ERR v1 denied PREPARE changes the host and only root may ask it");
      }
    }
  }

  @Test
  void aHookLinkedIntoEtcIsNotRunByPodmanAndTheDoctorSaysSoInTheDefaultDirectoryItIs() throws Exception {
    Sandbox.require();
    try (Journald journald = Journald.start(); Setup s = Setup.create()) {
      s.hooks = s.containers.etcHooksDir(); // where the README said to link it before: podman 4.3 does not read it
      try (Daemon d = s.daemon("remount:\n  enabled: true\n  targetSize: 1G\n  maxSize: 2G\n")) {
        Run missed = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(missed.shmKib()).as("no hook ran").isEqualTo(64 * MIB / KIB);
        CliRun doctor = CliRun.of("doctor", "-c", s.dir.resolve("shmguard.yaml").toString());
        assertThat(doctor.out()).as(doctor.out()).contains("[oci-hook-unread] the shmguard OCI hook is not run by podman:"
            + " /etc/containers/oci/hooks.d/shmguard-shm.json is in a directory podman does not read, so no container's"
            + " /dev/shm is sized at its start")
            .contains("podman reads hooks from /usr/share/containers/oci/hooks.d: its built-in default")
            .contains("fix: ln -s /usr/share/shmguard/oci/shmguard-shm.json /usr/share/containers/oci/hooks.d/");

        Files.move(s.hooks.resolve("shmguard-shm.json"), s.containers.hooksDir().resolve("shmguard-shm.json"));
        Run sized = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(sized.shmKib()).as("the hook ran from podman's default directory").isEqualTo(GIB / KIB);
        assertThat(CliRun.of("doctor", "-c", s.dir.resolve("shmguard.yaml").toString()).out())
            .contains("[oci-hook-on] the shmguard OCI hook is on for podman: /usr/share/containers/oci/hooks.d/shmguard-shm.json");
      }
    }
  }

  @Test
  void withRemountingOffNothingIsResizedAndTheJournalSaysWhy() throws Exception {
    Sandbox.require();
    try (Journald journald = Journald.start(); Setup s = Setup.create(); Daemon d = s.daemon("remount:\n  enabled: false\n")) {
      Run r = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
      assertThat(r.shmKib()).isEqualTo(64 * MIB / KIB);
      JsonNode e = journal("remount_refused", r.id);
      assertThat(e.get("MESSAGE").asText()).isEqualTo("did not remount podman:" + r.id.substring(0, 12)
          + ":/dev/shm: remounting is off (remount.enabled: false)");
      assertThat(e.get("SHM_SIZE_AFTER").asText()).isEqualTo(Long.toString(64 * MIB));
    }
  }

  @Test
  void withTheDaemonStoppedOrSilentTheContainerStartsUnchangedWithinTheBound() throws Exception {
    Sandbox.require();
    try (Journald journald = Journald.start(); Setup s = Setup.create()) {
      Path socket = s.dir.resolve("sock/advice.sock");
      Files.createDirectories(socket.getParent());
      s.hooksFor(socket, false);
      List<Long> plain = new ArrayList<>();
      List<Long> down = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        plain.add(s.run(List.of("--shm-size=64m"), "df -k /dev/shm | tail -1").firstLineMs);
        Run r = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(r.shmKib()).isEqualTo(64 * MIB / KIB);
        down.add(r.firstLineMs);
      }
      Run last = s.last;
      assertThat(journal("", last.id, "SYSLOG_IDENTIFIER", "shmguard-oci-hook").get("MESSAGE").asText())
          .startsWith("container " + last.id.substring(0, 12) + " starts with its /dev/shm as it is: shmguard did not answer within 2 s");

      try (ServerSocketChannel silent = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        silent.bind(UnixDomainSocketAddress.of(socket), 16); // listens, never accepts, never answers
        Run r = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(r.shmKib()).isEqualTo(64 * MIB / KIB);
        System.out.printf("container start to first instruction (podman 4.3, runc): no GPU %s ms; 4 GPUs, no daemon %s ms;"
            + " 4 GPUs, a daemon that never answers %d ms%n", plain, down, r.firstLineMs);
        assertThat(r.firstLineMs).as("the hook's bound (2 s) and a start").isBetween(2000L, 2000L + 5 * median(plain) + 1000);
        assertThat(median(down)).as("no daemon costs no wait").isLessThan(median(plain) + 1000);

        s.hooksFor(socket, true); // --refuse: a container it cannot fix does not start
        Run refused = s.run(List.of("--shm-size=64m", "-e", GPUS4), "df -k /dev/shm | tail -1");
        assertThat(refused.exit).as(refused.out).isNotZero();
        assertThat(refused.out).as("the container never ran").doesNotContain("/dev/shm");
        assertThat(Journald.entries("SYSLOG_IDENTIFIER", "shmguard-oci-hook")).anySatisfy(e -> assertThat(e.get("MESSAGE").asText())
            .contains(" refused: shmguard did not answer within 2 s"));
      } finally {
        Files.deleteIfExists(socket);
      }
    }
  }

  private static long median(List<Long> ms) {
    List<Long> sorted = new ArrayList<>(ms);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  private static JsonNode journal(String event, String containerId) {
    return journal(event, containerId, "SHMGUARD_EVENT", event);
  }

  /** The journal entry with {@code field=value} that names the container (its first 12 characters). */
  private static JsonNode journal(String event, String containerId, String field, String value) {
    String id12 = containerId.substring(0, 12);
    JsonNode[] found = {null};
    Eventually.until(value + " naming " + id12 + " in the journal", PATIENCE, () -> {
      for (JsonNode e : Journald.entries(field, value)) {
        if (e.get("MESSAGE").asText().contains(id12)) {
          found[0] = e;
          return true;
        }
      }
      return false;
    });
    return found[0];
  }

  private static String read(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p) : "";
  }

  /** A podman set-up with the shipped hook, a CDI spec directory, and a directory for the daemon. */
  private static final class Setup implements AutoCloseable {
    final Podman podman = Podman.create();
    final ContainersDirs containers = ContainersDirs.bind();
    final Path dir;
    /** Where the hook goes: the directory podman reads by default. */
    Path hooks = containers.hooksDir();
    Run last;

    private Setup(Path dir) throws IOException {
      this.dir = dir;
      Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x")); // users reach the socket
      for (String applet : new String[] {"df", "ls", "tail"}) {
        Files.createSymbolicLink(podman.rootfs().resolve("bin").resolve(applet), Path.of("busybox"));
      }
    }

    static Setup create() throws IOException {
      return new Setup(Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "oci-hook-"));
    }

    /** The shipped hooks.d file, its launcher this checkout's, the socket {@code socket}, and --refuse if asked. */
    void hooksFor(Path socket, boolean refuse) throws IOException {
      ObjectNode conf = (ObjectNode) JSON.readTree(CHECKOUT.resolve("packaging/oci/shmguard-shm.json").toFile());
      assertThat(conf.get("stages").toString()).isEqualTo("[\"createRuntime\"]");
      ObjectNode hook = (ObjectNode) conf.get("hook");
      assertThat(hook.get("path").asText()).isEqualTo("/usr/share/shmguard/oci-hook");
      hook.put("path", CHECKOUT.resolve("packaging/share/oci-hook").toString());
      hook.putArray("env").add("SHMGUARD_ADVICE_SOCKET=" + socket);
      if (refuse) {
        ((ArrayNode) hook.get("args")).add("--refuse");
      }
      Files.writeString(hooks.resolve("shmguard-shm.json"), JSON.writeValueAsString(conf));
    }

    Daemon daemon(String yaml) throws Exception {
      Path sockDir = Files.createDirectories(dir.resolve("run-shmguard"));
      Path socket = sockDir.resolve("advice.sock");
      Path config = Files.writeString(dir.resolve("shmguard.yaml"), Files.readString(TestConfig.write(
          "reap:\n  requireHostPidNamespace: false\n  grace: 1h\ndaemon:\n  interval: 1s\n  rediscover: 200ms\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + sockDir.resolve("advice.env") + "\n" + yaml)));
      Files.createDirectories(CDI);
      assertThat(Main.run("cdi", "generate", "-c", config.toString(), "--output", CDI.resolve("shmguard.yaml").toString())).isZero();
      hooksFor(socket, false);
      Path log = dir.resolve("daemon.log");
      // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
      Process p = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
          "--bounding-set", "-all," + UNIT_CAPS, Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx96m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      Daemon d = new Daemon(p, socket, log);
      Eventually.until("the daemon answers PING", PATIENCE, () -> d.ask("PING").startsWith("OK v1"));
      return d;
    }

    /** Runs {@code script} in a new container to its end: its output, and how long its first line took. */
    Run run(List<String> options, String script) throws Exception {
      return run(podman, options, script);
    }

    Run run(Podman with, List<String> options, String script) throws Exception {
      Path cid = dir.resolve("cid-" + System.nanoTime());
      List<String> all = new ArrayList<>(List.of("--cidfile", cid.toString()));
      all.addAll(options);
      long start = System.nanoTime();
      Process p = with.run(all, "sh", "-c", script);
      InputStream in = p.getInputStream();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      long first = -1;
      for (int b; (b = in.read()) >= 0; ) {
        if (first < 0) {
          first = (System.nanoTime() - start) / 1_000_000;
        }
        out.write(b);
      }
      assertThat(p.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      String id = Files.exists(cid) ? Files.readString(cid).strip() : "";
      last = new Run(p.exitValue(), out.toString(StandardCharsets.UTF_8), "", first, id);
      return last;
    }

    @Override
    public void close() throws IOException {
      podman.close();
      containers.close();
      Files.deleteIfExists(CDI.resolve("shmguard.yaml"));
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private record Run(int exit, String out, String err, long firstLineMs, String id) {
    /** The size of /dev/shm in KiB, from df -k's last line. */
    long shmKib() {
      String[] lines = out.strip().split("\n");
      for (String l : lines) {
        String[] f = l.trim().split("\\s+");
        if (f.length >= 6 && f[5].equals("/dev/shm")) {
          return Long.parseLong(f[1]);
        }
      }
      throw new AssertionError("no df line for /dev/shm in: " + out);
    }
  }

  private record Daemon(Process process, Path socket, Path log) implements AutoCloseable {
    String ask(String request) {
      try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
        c.write(ByteBuffer.wrap((request + "\n").getBytes(StandardCharsets.US_ASCII)));
        c.shutdownOutput();
        return new String(readAll(c), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return "";
      }
    }

    private static byte[] readAll(SocketChannel c) throws IOException {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteBuffer buf = ByteBuffer.allocate(4096);
      while (c.read(buf) > 0) {
        out.write(buf.array(), 0, buf.position());
        buf.clear();
      }
      return out.toByteArray();
    }

    @Override
    public void close() throws Exception {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }
}
