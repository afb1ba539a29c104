package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.PassReport;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.testing.GoldenHost;

/**
 * The metrics of a pass and of the exit path's reaps. The metrics page as Prometheus scrapes it, whole, against src/test/resources/golden/metrics.txt,
 * after one pass of the hand-built host: every family's name, help, type and labels. The daemon's
 * own resident memory is the one value that is not the host's, so it is written as 0 here. After an
 * intended change, {@code -Dgolden.update=true} rewrites the file (and docs/metrics.md follows).
 */
class ShmMetricsTest {
  @Test
  void theMetricsPageAfterOnePassIsTheCheckedInFile() throws Exception {
    Judgement j = GoldenHost.judgement();
    ShmMetrics metrics = ShmMetrics.create();
    metrics.passCompleted(new PassReport(j, new Plan(List.of(), null), List.of(), List.of(), List.of(), false,
        Duration.ofMillis(12)), Duration.ofMillis(12));

    String page = new String(new ScrapeText(metrics).current(), java.nio.charset.StandardCharsets.UTF_8).replaceAll("(?m)^(shmguard_resident_memory_bytes) \\S+$", "$1 0");

    assertThat(page).isEqualTo(GoldenHost.golden("metrics.txt", page));
  }

  @Test
  void theExitPathsReapsAreCountedAsAPasssAre() throws Exception {
    Judgement j = GoldenHost.judgement();
    var leaked = j.segments().stream().filter(a -> a.segment().displayName().equals("nccl-Leak01")).findFirst().orElseThrow();
    ShmMetrics metrics = ShmMetrics.create();

    metrics.reaped(List.of(new org.shmguard.remedy.ReapOutcome(leaked, org.shmguard.remedy.ReapOutcome.Result.REAPED,
        "unlinked")));

    String page = new String(new ScrapeText(metrics).current(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(page).contains("shmguard_reaps_total{container=\"\",mount=\"/dev/shm\",owner_uid=\"\",pod=\"\","
        + "result=\"reaped\",scope=\"node\"} 1.0");
    assertThat(page).contains("shmguard_reaped_bytes_total{container=\"\",mount=\"/dev/shm\",owner_uid=\"\","
        + "pod=\"\",scope=\"node\"} 4194304.0");
    assertThat(page).contains("shmguard_passes_total 0.0");
  }
}
