package org.shmguard.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.shmguard.model.MountContents;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.MountReport;

/**
 * The gauges that describe the latest pass: each mount's size, use and hidden bytes, and its
 * segments by verdict and kind. Built from the last judgement at scrape time, so a container's
 * mount disappears from the metrics as soon as it disappears from the host.
 */
final class PassGauges implements MultiCollector {
  private volatile Judgement latest;

  void update(Judgement judgement) {
    latest = judgement;
  }

  @Override
  public MetricSnapshots collect() {
    Judgement j = latest;
    List<GaugeSnapshot> out = new ArrayList<>();
    Map<String, GaugeSnapshot.Builder> g = new TreeMap<>();
    gauge(g, "shmguard_mount_size_bytes", "Size of the shm tmpfs (statvfs).");
    gauge(g, "shmguard_mount_used_bytes", "Bytes in use on the shm tmpfs, hidden segments included (statvfs).");
    gauge(g, "shmguard_mount_free_bytes", "Bytes free on the shm tmpfs (statvfs).");
    gauge(g, "shmguard_mount_hidden_bytes", "Bytes held by unlinked segments that are still mapped or open: df counts them, ls does not.");
    gauge(g, "shmguard_mount_used_ratio", "Used bytes over size of the shm tmpfs, 0 to 1.");
    gauge(g, "shmguard_segments", "Files the latest pass examined in the mount's root (names a reap pattern allows, at most reap.examineLimit), by verdict and guessed kind.");
    gauge(g, "shmguard_mount_files", "Regular files in the mount's root, whatever their names.");
    gauge(g, "shmguard_mount_file_bytes", "Allocated bytes of the regular files in the mount's root.");
    gauge(g, "shmguard_mount_unexamined_files", "Files with reapable names beyond reap.examineLimit: later passes reach them.");
    gauge(g, "shmguard_segment_bytes", "Allocated bytes of the files in the mount's root by verdict and guessed kind.");
    if (j == null) {
      g.values().forEach(b -> out.add(b.build()));
      return new MetricSnapshots(new ArrayList<>(out));
    }
    InfoSnapshot.Builder workloads = InfoSnapshot.builder().name("shmguard_mount_workload")
        .help("Who a mount belongs to, where its runtime mounted it on the host: its pod's namespace, name and uid, or its container's id and name.");
    for (MountReport r : j.mounts()) {
      ShmMount m = r.mount();
      Labels labels = mountLabels(m);
      if (m.usage() != null) {
        point(g, "shmguard_mount_size_bytes", labels, m.usage().sizeBytes());
        point(g, "shmguard_mount_used_bytes", labels, m.usage().usedBytes());
        point(g, "shmguard_mount_free_bytes", labels, m.usage().freeBytes());
        point(g, "shmguard_mount_used_ratio", labels, m.usage().usedFraction());
      }
      point(g, "shmguard_mount_hidden_bytes", labels, r.hiddenBytes());
      if (m.workload() != null) {
        workloads.dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(workloadLabels(labels, m.workload())).build());
      }
      MountContents c = j.snapshot().contents(m.dev());
      if (c != null) {
        point(g, "shmguard_mount_files", labels, c.files());
        point(g, "shmguard_mount_file_bytes", labels, c.fileBytes());
        point(g, "shmguard_mount_unexamined_files", labels, c.unexamined());
      }
    }
    Map<Labels, long[]> byVerdictKind = new TreeMap<>();
    for (Assessment a : j.segments()) {
      Labels labels = mountLabels(a.mount()).add("verdict", a.verdict().label()).add("kind", a.kind());
      long[] c = byVerdictKind.computeIfAbsent(labels, l -> new long[2]);
      c[0]++;
      c[1] += a.segment().allocatedBytes();
    }
    byVerdictKind.forEach((labels, c) -> {
      point(g, "shmguard_segments", labels, c[0]);
      point(g, "shmguard_segment_bytes", labels, c[1]);
    });
    g.values().forEach(b -> out.add(b.build()));
    List<MetricSnapshot> all = new ArrayList<>(out);
    all.add(workloads.build());
    return new MetricSnapshots(all);
  }

  /** Mount labels plus the device, which keeps two unattributed container mounts at /dev/shm apart. */
  private static Labels mountLabels(ShmMount m) {
    MountLabels l = MountLabels.of(m);
    return Labels.of("mount", l.mount(), "container", l.container(), "pod", l.pod(), "scope", l.scope(),
        "owner_uid", l.ownerUid(), "dev", m == null ? "" : m.dev().toString());
  }

  /** The mount's labels and who it belongs to: one series per mount, so no more series than the mount's own. */
  private static Labels workloadLabels(Labels mount, org.shmguard.model.Workload w) {
    return mount.add("runtime", w.runtime()).add("pod_namespace", orEmpty(w.podNamespace()))
        .add("pod_name", orEmpty(w.podName())).add("pod_uid", orEmpty(w.podUid())).add("volume", orEmpty(w.volume()))
        .add("container_id", orEmpty(w.containerId())).add("container_name", orEmpty(w.containerName()));
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  private static void gauge(Map<String, GaugeSnapshot.Builder> g, String name, String help) {
    g.put(name, GaugeSnapshot.builder().name(name).help(help));
  }

  private static void point(Map<String, GaugeSnapshot.Builder> g, String name, Labels labels, double value) {
    g.get(name).dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(value).build());
  }
}
