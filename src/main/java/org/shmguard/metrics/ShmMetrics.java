package org.shmguard.metrics;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.time.Duration;
import java.util.List;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.SelfMemory;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.ReapOutcome;

/**
 * Every {@code shmguard_*} metric, in a registry of its own: the gauges of the latest pass
 * ({@link PassGauges}) and the counters that add up over the daemon's life.
 *
 * <pre>{@code
 * ShmMetrics metrics = ShmMetrics.create();
 * metrics.passCompleted(engine.clean(false), took);
 * MetricSnapshots now = metrics.scrape();
 * }</pre>
 */
public final class ShmMetrics implements MetricsSink {
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final PassGauges passGauges = new PassGauges();
  private final Counter reaps;
  private final Counter reapedBytes;
  private final Counter alerts;
  private final Counter advice;
  private final Counter remounts;
  private final Counter passes;
  private final Counter incompletePasses;
  private final Histogram scanDuration;
  private final Gauge lastPass;
  private final Gauge lastPassComplete;
  private final Gauge reapBlocked;
  private final Gauge processes;
  private final java.util.concurrent.atomic.AtomicLong changes = new java.util.concurrent.atomic.AtomicLong();
  private final Gauge resident;

  private ShmMetrics(String version) {
    registry.register(passGauges);
    reaps = Counter.builder().name("shmguard_reaps_total")
        .help("Reap attempts by result: reaped, would-reap (dry run), skipped (the confirming pass found a holder or a change), failed.")
        .labelNames(MountLabels.namesAnd("result")).register(registry);
    reapedBytes = Counter.builder().name("shmguard_reaped_bytes_total")
        .help("Allocated bytes of the segments shmguard unlinked.")
        .labelNames(MountLabels.NAMES).register(registry);
    alerts = Counter.builder().name("shmguard_alerts_total").help("Alerts raised, by kind.")
        .labelNames(MountLabels.namesAnd("kind")).register(registry);
    advice = Counter.builder().name("shmguard_advice_answers_total")
        .help("Answers the advice socket gave, by advice.")
        .labelNames(MountLabels.namesAnd("advice")).register(registry);
    remounts = Counter.builder().name("shmguard_remounts_total").help("Remounts tried, by result: ok, refused or failed.")
        .labelNames(MountLabels.namesAnd("result")).register(registry);
    passes = Counter.builder().name("shmguard_passes_total").help("Observe, decide, act passes run.").register(registry);
    incompletePasses = Counter.builder().name("shmguard_incomplete_passes_total")
        .help("Passes whose /proc scan could not read every process, so nothing was reaped on their evidence.")
        .register(registry);
    scanDuration = Histogram.builder().name("shmguard_scan_duration_seconds")
        .help("Time one pass took: mounts, segments, the /proc holder scan, judging and reaping.")
        .classicOnly().classicUpperBounds(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30).register(registry);
    lastPass = Gauge.builder().name("shmguard_last_pass_timestamp_seconds")
        .help("When the latest pass observed the host, in seconds since the epoch.").register(registry);
    lastPassComplete = Gauge.builder().name("shmguard_last_pass_complete")
        .help("1 when the latest pass read every process, 0 when it was incomplete.").register(registry);
    reapBlocked = Gauge.builder().name("shmguard_reap_blocked")
        .help("1 when reaping is blocked (incomplete pass, not in the host's PID namespace), else 0.").register(registry);
    processes = Gauge.builder().name("shmguard_processes_scanned").help("Processes the latest /proc pass read.")
        .register(registry);
    resident = Gauge.builder().name("shmguard_resident_memory_bytes")
        .help("The daemon's resident memory (VmRSS) after the latest pass.").register(registry);
    Info.builder().name("shmguard_build_info").help("shmguard's version.").labelNames("version").register(registry)
        .setLabelValues(version);
  }

  public static ShmMetrics create() {
    String v = ShmMetrics.class.getPackage().getImplementationVersion();
    return new ShmMetrics(v == null ? "development" : packageVersion(v));
  }

  /**
   * The version as the packages name it, so a fleet's build_info matches dpkg -l and rpm -q: the
   * build's 0.1.0-SNAPSHOT is the packages' 0.1.0~SNAPSHOT (a ~ sorts a snapshot before its release).
   */
  static String packageVersion(String buildVersion) {
    return buildVersion.replace("-SNAPSHOT", "~SNAPSHOT");
  }

  @Override
  public void passCompleted(PassReport pass, Duration took) {
    var j = pass.judgement();
    passGauges.update(j);
    passes.inc();
    if (!j.snapshot().complete()) {
      incompletePasses.inc();
    }
    if (took != null) {
      scanDuration.observe(took.toNanos() / 1e9);
    }
    lastPass.set(j.snapshot().takenAt().toEpochMilli() / 1e3);
    lastPassComplete.set(j.snapshot().complete() ? 1 : 0);
    reapBlocked.set(j.plan().blockers().isEmpty() ? 0 : 1);
    processes.set(j.snapshot().processesScanned());
    long rss = SelfMemory.residentBytes();
    if (rss > 0) {
      resident.set(rss);
    }
    countReaps(pass.outcomes());
    changes.incrementAndGet();
  }

  /** The exit path's reaps, counted as a pass's are. */
  public void reaped(List<ReapOutcome> outcomes) {
    countReaps(outcomes);
    changes.incrementAndGet();
  }

  private void countReaps(List<ReapOutcome> outcomes) {
    for (ReapOutcome o : outcomes) {
      MountLabels l = MountLabels.of(o.candidate().mount());
      reaps.labelValues(l.with(o.result().label())).inc();
      if (o.result() == ReapOutcome.Result.REAPED) {
        reapedBytes.labelValues(l.values()).inc(o.candidate().segment().allocatedBytes());
      }
    }
  }

  @Override
  public void alertRaised(String kind, String mount, String container, String scope, String ownerUid) {
    alerts.labelValues(MountLabels.of(mount, container, scope, ownerUid).with(kind)).inc();
    changes.incrementAndGet();
  }

  @Override
  public void adviceAnswered(String answer, ShmMount mount) {
    advice.labelValues(MountLabels.of(mount).with(answer)).inc();
    changes.incrementAndGet();
  }

  @Override
  public void remounted(String mount, String container, String result) {
    remounts.labelValues(MountLabels.of(mount, container, null, null).with(result)).inc();
    changes.incrementAndGet();
  }

  public PrometheusRegistry registry() {
    return registry;
  }

  /** How many times the metrics changed; counted after each change, so a render that read a count shows at least that. */
  long changes() {
    return changes.get();
  }

  public MetricSnapshots scrape() {
    return registry.scrape();
  }
}
