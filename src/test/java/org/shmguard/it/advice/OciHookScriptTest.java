package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OCI hook's launcher (packaging/share/oci-hook) and script as a runtime runs them, with a
 * state on stdin and a bundle's config.json, against a socket that records the request and
 * answers as the daemon would: which GPUs it counts, what it asks, what it does with the answer.
 */
class OciHookScriptTest {
  private static final Path LAUNCHER = Path.of("packaging/share/oci-hook").toAbsolutePath();
  private Path dir;
  private Path socket;
  private ServerSocketChannel server;
  private Thread answering;
  private final List<String> asked = new CopyOnWriteArrayList<>();
  private volatile String reply = "OK v1\ngrew it\n";

  @BeforeEach
  void listen() throws IOException {
    dir = Files.createTempDirectory("oci-hook-script-");
    socket = dir.resolve("advice.sock");
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket));
    answering = new Thread(() -> {
      while (server.isOpen()) {
        try (SocketChannel c = server.accept()) {
          ByteArrayOutputStream in = new ByteArrayOutputStream();
          ByteBuffer buf = ByteBuffer.allocate(4096);
          while (c.read(buf) > 0) {
            in.write(buf.array(), 0, buf.position());
            buf.clear();
          }
          asked.add(in.toString(StandardCharsets.US_ASCII).strip());
          c.write(ByteBuffer.wrap(reply.getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
          return;
        }
      }
    });
    answering.start();
  }

  @AfterEach
  void close() throws Exception {
    server.close();
    answering.join(5000);
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void countsTheGpusOfTheEnvironmentTheDeviceNodesAndCdiAndSendsRootsPrepare() throws Exception {
    assertThat(hook(spec("\"NVIDIA_VISIBLE_DEVICES=0,1,2,3\"", "[]", "{}", "\"rootfs\"")).status).isZero();
    assertThat(asked).containsExactly("PREPARE v1 container=c0ffee0000000000000000000000000000000000000000000000000000000001 pid=4242"
        + " gpus=4 root=" + dir.resolve("bundle/rootfs"));
    asked.clear();
    // A state written over several lines (no runtime here does) is read whole all the same.
    assertThat(hook(spec("\"NVIDIA_VISIBLE_DEVICES=0,1\"", "[]", "{}", "\"/merged\"").replace(",", ",\n ")).status).isZero();
    assertThat(asked).singleElement().satisfies(a -> assertThat(a).endsWith(" pid=4242 gpus=2 root=/merged"));
    asked.clear();
    hook(spec("\"NVIDIA_VISIBLE_DEVICES=all\"", "[]", "{}", "\"/merged\""));
    hook(spec("\"NVIDIA_VISIBLE_DEVICES=void\"", "[{\"path\":\"/dev/nvidia0\"},{\"path\":\"/dev/nvidiactl\"},{\"path\":\"/dev/nvidia1\"}]",
        "{}", "\"/merged\""));
    hook(spec("\"PATH=/bin\"", "[]", "{\"cdi.k8s.io/gpu\":\"nvidia.com/gpu=0,nvidia.com/gpu=1,nvidia.com/gpu=2\"}", "\"/merged\""));
    hook(spec("\"NVIDIA_VISIBLE_DEVICES=0,1\"", "[]", "{\"shmguard.io/gpus\":\"8\"}", "\"/merged\""));
    assertThat(asked).extracting(a -> a.replaceAll(".* gpus=", "gpus=")).containsExactly("gpus=all root=/merged",
        "gpus=2 root=/merged", "gpus=3 root=/merged", "gpus=8 root=/merged");
  }

  @Test
  void aContainerWithoutGpusAsksNothingAndCostsOnlyTheShell() throws Exception {
    List<Long> ms = new ArrayList<>();
    for (String env : List.of("\"PATH=/bin\"", "\"NVIDIA_VISIBLE_DEVICES=none\"", "\"NVIDIA_VISIBLE_DEVICES=\"")) {
      Ran r = hook(spec(env, "[]", "{}", "\"/merged\""));
      assertThat(r.status).isZero();
      assertThat(r.err).isEmpty();
      ms.add(r.ms);
    }
    assertThat(asked).isEmpty();
    List<Long> gpu = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      gpu.add(hook(spec("\"NVIDIA_VISIBLE_DEVICES=0,1,2,3\"", "[]", "{}", "\"/merged\"")).ms);
    }
    System.out.printf("oci-hook run time: no GPU %s ms (shell and grep only); 4 GPUs, answered at once %s ms (python3)%n", ms, gpu);
  }

  @Test
  void aRefusalStartsTheContainerUnlessTheOperatorAskedToRefuse() throws Exception {
    reply = "ERR v1 refused did not remount podman:c0ffee000000:/dev/shm: remounting is off (remount.enabled: false)\n";
    String gpus = spec("\"NVIDIA_VISIBLE_DEVICES=0,1,2,3\"", "[]", "{}", "\"/merged\"");
    assertThat(hook(gpus).status).isZero();
    Ran refused = hook(gpus, "--refuse");
    assertThat(refused.status).isEqualTo(1);
    assertThat(refused.err).isEqualTo("shmguard-oci-hook: did not remount podman:c0ffee000000:/dev/shm: remounting is off"
        + " (remount.enabled: false); refusing the container (--refuse)\n");
  }

  private String spec(String env, String devices, String annotations, String root) throws IOException {
    Path bundle = Files.createDirectories(dir.resolve("bundle"));
    Files.writeString(bundle.resolve("config.json"), "{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[" + env + "]},"
        + "\"root\":{\"path\":" + root + "},\"linux\":{\"devices\":" + devices + "},\"annotations\":" + annotations + "}");
    return "{\"ociVersion\":\"1.0.2\",\"id\":\"c0ffee0000000000000000000000000000000000000000000000000000000001\","
        + "\"status\":\"creating\",\"pid\":4242,\"bundle\":\"" + bundle + "\",\"annotations\":" + annotations + "}";
  }

  private record Ran(int status, String err, long ms) {}

  private Ran hook(String state, String... more) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(LAUNCHER.toString(), "--timeout", "2", "--socket", socket.toString()));
    cmd.addAll(List.of(more));
    // As runc runs a hook: no environment but the hook's own.
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().clear();
    long start = System.nanoTime();
    Process p = pb.start();
    p.getOutputStream().write(state.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    return new Ran(p.exitValue(), err, (System.nanoTime() - start) / 1_000_000);
  }
}
