package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.metrics.ShmMetrics;

/** The sample alerting rules are valid for Prometheus and name only metrics shmguard exports. */
class AlertRulesTest {
  private static final Path RULES = Path.of("packaging/prometheus/shmguard-alerts.yaml");

  @Test
  void promtoolAcceptsTheSampleRules() {
    Promtool.checkRules(RULES);
  }

  /**
   * src/test/prometheus/shmguard-alerts-test.yaml: a daemon whose series vanish is ShmguardDown
   * (while ShmguardPassesStale, which reads those series, returns nothing), a scrape that fails
   * from the start is ShmguardScrapeFailing, and no shmguard at all is ShmguardAbsent.
   */
  @Test
  void theDownAlertsFireWhenTheSeriesVanishOrTheScrapeFails() {
    Promtool.testRules(Path.of("src/test/prometheus/shmguard-alerts-test.yaml"));
  }

  @Test
  void everyMetricTheRulesUseIsOneShmguardExports() throws Exception {
    var names = ShmMetrics.create().registry().scrape().stream().map(s -> s.getMetadata().getPrometheusName()).toList();
    Matcher m = Pattern.compile("shmguard_[a-z_]+").matcher(Files.readString(RULES));
    while (m.find()) {
      String used = m.group().replaceAll("_(total|count|sum|bucket|info)$", "");
      assertThat(names).as("metric in the rules").contains(used);
    }
  }
}
