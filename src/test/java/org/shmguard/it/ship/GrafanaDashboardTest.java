package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.metrics.ShmMetrics;

/**
 * The shipped Grafana dashboard: each query is PromQL that promtool accepts and names only metrics
 * shmguard exports ({@link DaemonMetricsTest} checks the same names against a live daemon's
 * /metrics), and the panels are laid out as Grafana reads them.
 */
class GrafanaDashboardTest {
  static final Path DASHBOARD = Path.of("packaging/grafana/shmguard-dashboard.json");
  private static final Pattern METRIC = Pattern.compile("\\bshmguard_[a-z_]+");

  /** Grafana's variable query {@code label_values(METRIC, label)}: PromQL's part is the metric selector. */
  private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.+), *[a-z_]+\\)");

  /**
   * Every PromQL query of the dashboard: the panels' targets and the host variable's query (the
   * selector inside Grafana's {@code label_values}).
   */
  static List<String> queries() {
    try {
      JsonNode d = new ObjectMapper().readTree(DASHBOARD.toFile());
      List<String> out = new ArrayList<>();
      for (JsonNode p : d.path("panels")) {
        for (JsonNode t : p.path("targets")) {
          out.add(t.path("expr").asText());
        }
      }
      for (JsonNode v : d.at("/templating/list")) {
        if (v.path("type").asText().equals("query")) {
          Matcher m = LABEL_VALUES.matcher(v.at("/query/query").asText());
          assertThat(m.matches()).as(v.at("/query/query").asText()).isTrue();
          out.add(m.group(1));
        }
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The metric names the queries use, as they appear in a scrape (a histogram's _bucket series included). */
  static Set<String> metricNames() {
    Set<String> names = new TreeSet<>();
    for (String q : queries()) {
      Matcher m = METRIC.matcher(q);
      while (m.find()) {
        names.add(m.group());
      }
    }
    return names;
  }

  @Test
  void everyQueryNamesAnShmguardMetricAndEveryNameIsOneShmguardRegisters() {
    Set<String> registered = new HashSet<>();
    ShmMetrics.create().registry().scrape().forEach(s -> registered.add(s.getMetadata().getPrometheusName()));
    for (String q : queries()) {
      assertThat(METRIC.matcher(q).find()).as("names a shmguard metric: " + q).isTrue();
    }
    for (String name : metricNames()) {
      assertThat(registered).as("metric of the dashboard").contains(name.replaceAll("_(total|count|sum|bucket|info)$", ""));
    }
    assertThat(metricNames()).hasSizeGreaterThanOrEqualTo(15);
  }

  /** Each query, its variable given a value as Grafana does, as a recording rule promtool must accept. */
  @Test
  void promtoolAcceptsEveryQuery() throws Exception {
    Promtool.requireInstalled();
    StringBuilder rules = new StringBuilder("groups:\n  - name: shmguard-dashboard\n    rules:\n");
    int n = 0;
    for (String q : queries()) {
      String promql = q.replace("$instance", ".*");
      assertThat(promql).as("no Grafana variable left but $instance").doesNotContain("$");
      rules.append("      - record: shmguard_dashboard:query").append(n++).append('\n')
          .append("        expr: ").append(new ObjectMapper().writeValueAsString(promql)).append('\n');
    }
    Path file = Files.createTempFile("dashboard-queries", ".yaml");
    try {
      Files.writeString(file, rules);
      Promtool.checkRules(file);
    } finally {
      Files.delete(file);
    }
  }

  @Test
  void panelsHaveUniqueIdsAQueryEachAndThePrometheusDatasourceVariable() throws Exception {
    JsonNode d = new ObjectMapper().readTree(DASHBOARD.toFile());
    assertThat(d.path("uid").asText()).isEqualTo("shmguard-fleet");
    Set<Integer> ids = new HashSet<>();
    for (JsonNode p : d.path("panels")) {
      assertThat(ids.add(p.path("id").asInt())).as("unique panel id " + p.path("id")).isTrue();
      assertThat(p.path("targets")).as(p.path("title").asText()).isNotEmpty();
      assertThat(p.at("/datasource/uid").asText()).isEqualTo("${datasource}");
      assertThat(p.at("/gridPos/w").asInt()).isBetween(1, 24);
      assertThat(p.path("description").asText()).as(p.path("title").asText()).isNotEmpty();
    }
    assertThat(d.at("/templating/list/0/type").asText()).isEqualTo("datasource");
    assertThat(d.at("/templating/list/0/query").asText()).isEqualTo("prometheus");
  }
}
