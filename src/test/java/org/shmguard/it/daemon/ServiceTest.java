package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.ProtocolException;
import org.shmguard.config.Config;
import org.shmguard.daemon.Service;
import org.shmguard.host.HostPaths;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Exposition;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * {@link Service}: the daemon with its outputs as {@code shmguard daemon} wires them, the advice
 * socket and the metrics among them. An operational fault at the start (the metrics port taken)
 * is survived and reported through the same outputs as every other alert, and the metrics count
 * the socket's answers from the first one.
 */
class ServiceTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void aTakenMetricsPortIsSurvivedAndCountedAndTheSocketsFirstAnswerIsCounted() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "service-");
    Path socket = dir.resolve("advice.sock");
    Path textfile = dir.resolve("shmguard.prom");
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        ServerSocket squatter = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Config config = TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "metrics:\n  listen: \"127.0.0.1:" + squatter.getLocalPort() + "\"\n  textfile: " + textfile + "\n"));
      try (Service service = Service.start(config, HostPaths.system())) {
        // the socket listens at once and answers once the first pass has judged the host
        String[] answer = {""};
        Eventually.until("the first pass's advice", PATIENCE, () -> {
          try {
            answer[0] = AdviceClient.ask(socket, "ADVISE v1 dev=" + shm.dev(), PATIENCE);
            return true;
          } catch (ProtocolException e) {
            assertThat(e.getMessage()).contains("has not finished its first pass");
            return false;
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
        assertThat(answer[0]).contains("SHMGUARD_MOUNT=" + shm.path());

        shm.createSegment("nccl-Svc001", 4096); // an event: a pass, after which the textfile is written again
        String mount = "mount=\"" + shm.path() + "\"";
        Eventually.until("the answer counted in the textfile", PATIENCE,
            () -> Exposition.has(read(textfile), "shmguard_advice_answers_total", mount));
        String page = read(textfile);
        assertThat(Exposition.sample(page, "shmguard_advice_answers_total", mount)).isEqualTo(1);
        // raised while the port opened, before the first pass: counted once, through the outputs
        assertThat(Exposition.sample(page, "shmguard_alerts_total", "kind=\"metrics_unavailable\"")).isEqualTo(1);
      }
      assertThat(socket).as("the socket file, removed at close").doesNotExist();
    } finally {
      for (String f : new String[] {"advice.env", "shmguard.prom", "advice.sock"}) {
        Files.deleteIfExists(dir.resolve(f));
      }
      Files.deleteIfExists(dir);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
