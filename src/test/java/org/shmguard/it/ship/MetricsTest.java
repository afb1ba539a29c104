package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.testing.Exposition.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The daemon's metrics after a real pass over a real tmpfs, read the way Prometheus and
 * node_exporter read them: scraped over HTTP and from the textfile, then checked with promtool.
 */
class MetricsTest {
  private TmpfsMount shm;
  private Path textfile;

  @BeforeEach
  void mount() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Files.createDirectories(Sandbox.MOUNTS);
    textfile = Files.createTempDirectory(Sandbox.MOUNTS, "textfile-").resolve("shmguard.prom");
  }

  @AfterEach
  void unmount() throws Exception {
    shm.close();
    Files.deleteIfExists(textfile);
    Files.deleteIfExists(textfile.getParent());
  }

  private Config config() {
    return TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
        + "metrics:\n  listen: \"127.0.0.1:0\"\n  textfile: " + textfile + "\n"));
  }

  @Test
  void scrapeShowsMountUseVerdictsAndReapsAndPassesPromtool() throws Exception {
    shm.createSegment("nccl-Leak01", 9_637_892);
    Path held = shm.createSegment("nccl-Held01", 4_100);
    Path hidden = shm.createSegment("nccl-Hide01", 1_048_576);
    Config config = config();
    try (Holder fd = Holder.start("fd", held.toString());
        Holder map = Holder.start("map-unlink", hidden.toString());
        MetricsOutputs metrics = MetricsOutputs.start(config)) {
      Engine engine = Engine.create(config, HostPaths.system());
      metrics.passCompleted(engine.clean(false), Duration.ofMillis(42));

      String body = scrape(metrics.port());

      String mount = "mount=\"" + shm.path() + "\"";
      assertThat(sample(body, "shmguard_mount_size_bytes", mount, "dev=\"" + shm.dev() + "\"")).isEqualTo(64 << 20);
      assertThat(sample(body, "shmguard_mount_hidden_bytes", mount)).isEqualTo(1_048_576);
      assertThat(sample(body, "shmguard_segments", mount, "verdict=\"leaked\"", "kind=\"nccl-shm-recv\"")).isEqualTo(1);
      assertThat(sample(body, "shmguard_segments", mount, "verdict=\"held\"")).isEqualTo(1);
      assertThat(sample(body, "shmguard_reaps_total", mount, "result=\"reaped\"")).isEqualTo(1);
      assertThat(sample(body, "shmguard_reaped_bytes_total", mount)).isGreaterThanOrEqualTo(9_637_892);
      assertThat(sample(body, "shmguard_passes_total")).isEqualTo(1);
      assertThat(sample(body, "shmguard_incomplete_passes_total")).isZero();
      assertThat(sample(body, "shmguard_scan_duration_seconds_count")).isEqualTo(1);
      assertThat(sample(body, "shmguard_last_pass_complete")).isEqualTo(1);
      Promtool.checkMetrics(body);
    }
  }

  @Test
  void textfileIsReplacedWholeAfterEveryPassAndPassesPromtool() throws Exception {
    Config config = config();
    try (MetricsOutputs metrics = MetricsOutputs.start(config)) {
      Engine engine = Engine.create(config, HostPaths.system());
      metrics.passCompleted(engine.clean(false), Duration.ofMillis(5));
      shm.createSegment("nccl-Late01", 4_100);
      metrics.passCompleted(engine.clean(false), Duration.ofMillis(5));

      // Written on the textfile's own thread: the second pass's file follows shortly.
      Eventually.until("the textfile of the second pass", Duration.ofSeconds(30),
          () -> readOrEmpty(textfile).contains("shmguard_passes_total 2"));
      String text = Files.readString(textfile);
      assertThat(sample(text, "shmguard_passes_total")).isEqualTo(2);
      assertThat(sample(text, "shmguard_reaps_total", "result=\"reaped\"")).isEqualTo(1);
      try (var files = Files.list(textfile.getParent())) {
        assertThat(files).as("no temporary file left beside it").containsExactly(textfile);
      }
      assertThat(Files.getPosixFilePermissions(textfile)).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
      Promtool.checkMetrics(text);
    }
  }

  @Test
  void alertsAdviceAndRemountsAreCountedByMount() throws Exception {
    Config config = config();
    try (MetricsOutputs metrics = MetricsOutputs.start(config)) {
      var pass = Engine.create(config, HostPaths.system()).clean(false);
      metrics.passCompleted(pass, Duration.ofMillis(5));
      var mount = pass.judgement().mounts().get(0).mount();
      metrics.alertRaised("capacity_critical", mount.displayName(), mount.container());
      metrics.adviceAnswered("shm-disable", mount);
      metrics.remounted(mount.displayName(), mount.container(), "ok");

      String body = scrape(metrics.port());

      assertThat(sample(body, "shmguard_alerts_total", "kind=\"capacity_critical\"")).isEqualTo(1);
      assertThat(sample(body, "shmguard_advice_answers_total", "advice=\"shm-disable\"")).isEqualTo(1);
      assertThat(sample(body, "shmguard_remounts_total", "result=\"ok\"")).isEqualTo(1);
      Promtool.checkMetrics(body);
    }
  }

  @Test
  void remountsAreCountedFromTheirOutcomesNotFromAlertKinds() throws Exception {
    Config config = config();
    try (MetricsOutputs metrics = MetricsOutputs.start(config)) {
      metrics.remounted(new org.shmguard.remedy.RemountOutcome(org.shmguard.remedy.RemountOutcome.Result.REFUSED,
          "/dev/shm", 0, 0, "remounting is off", "", ""));
      metrics.export(org.shmguard.engine.PassReport.of(org.shmguard.alert.Alert.of(
          org.shmguard.alert.EventKind.REMOUNT_GROWN, "an alert, not an outcome").with("SHM_MOUNT", "/dev/shm")));

      String body = scrape(metrics.port());

      assertThat(sample(body, "shmguard_remounts_total", "result=\"refused\"")).isEqualTo(1);
      assertThat(body.lines().filter(l -> l.startsWith("shmguard_remounts_total{") && l.contains("result=\"ok\"")))
          .as("a remount_grown alert is no remount").isEmpty();
      assertThat(sample(body, "shmguard_alerts_total", "kind=\"remount_grown\"")).isEqualTo(1);
    }
  }

  /** The value of the one sample of {@code name} whose labels contain every fragment. */
  private static String readOrEmpty(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "";
    }
  }

  private static String scrape(int port) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
    return r.body();
  }
}
