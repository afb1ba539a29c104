package org.shmguard.doctor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.host.HostPaths;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.Nvml;
import org.shmguard.text.Glob;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.ReapPolicy;

/**
 * A fake host for the doctor's checks: a directory used as the HostPaths root (with
 * /proc/driver/nvidia, a container's /proc/PID/root/dev, logind.conf files) and a snapshot built
 * from mounts, segments and holders, judged by the real Judge.
 */
final class HostFixture {
  static final Instant NOW = Instant.parse("2026-11-21T10:00:00Z");
  static final long MIB = 1L << 20;
  static final long GIB = 1L << 30;

  final Path root;
  private final List<ShmMount> mounts = new ArrayList<>();
  private final List<Segment> segments = new ArrayList<>();
  private final HolderIndex.Builder holders = HolderIndex.builder();
  private final Map<Integer, ProcessInfo> processes = new HashMap<>();
  private final BitSet live = new BitSet();
  private boolean hostPid = true;
  private boolean requireHostPid = true;
  private Integer ranks;
  private Nvml.Reading gpuMemory = new Nvml.Reading(List.of(), "libnvidia-ml.so.1 cannot be loaded (fixture)");
  private DaemonProbe.Status daemon = new DaemonProbe.Status("/run/shmguard/advice.sock", true, true, null, null, false);
  private int nextIno = 100;

  HostFixture(Path root) {
    this.root = root;
  }

  HostPaths paths() {
    return HostPaths.of(root.toString());
  }

  HostFixture file(String path, String text) {
    Path p = root.resolve(path.startsWith("/") ? path.substring(1) : path);
    try {
      Files.createDirectories(p.getParent());
      Files.writeString(p, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  HostFixture dir(String path) {
    try {
      Files.createDirectories(root.resolve(path.startsWith("/") ? path.substring(1) : path));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** N GPUs in /proc/driver/nvidia/gpus and the given driver version line. */
  HostFixture gpus(int n, String driverVersion) {
    for (int i = 0; i < n; i++) {
      file("/proc/driver/nvidia/gpus/0000:" + String.format("%02x", 0x17 + i) + ":00.0/information", "Model: NVIDIA GeForce RTX 4090\nDevice Minor: " + i + "\n");
    }
    if (driverVersion != null) {
      file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + driverVersion
          + "  Thu Feb 20 18:33:39 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    }
    return this;
  }

  /** The container of {@code pid} sees these /dev/nvidiaN and IMEX channels. */
  HostFixture containerDevices(int pid, List<Integer> gpuMinors, List<Integer> imexChannels) {
    dir("/proc/" + pid + "/root/dev");
    gpuMinors.forEach(n -> file("/proc/" + pid + "/root/dev/nvidia" + n, ""));
    file("/proc/" + pid + "/root/dev/nvidiactl", "");
    imexChannels.forEach(n -> file("/proc/" + pid + "/root/dev/nvidia-caps-imex-channels/channel" + n, ""));
    return this;
  }

  ShmMount hostShm(long size, long used) {
    return add(new ShmMount(Dev.of(0, 25), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw,size=" + size / 1024 + "k",
        "mnt:[1]", List.of(), null, usage(size, used)));
  }

  /** A container's own /dev/shm, reached through /proc/PID/root, labelled as its cgroup says. */
  ShmMount containerShm(int minor, int pid, String container, long size, long used) {
    return add(new ShmMount(Dev.of(0, minor), "/proc/" + pid + "/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE,
        "rw,size=" + size / 1024 + "k", "mnt:[" + pid + "]", List.of(pid), container, usage(size, used)));
  }

  /** A pod's memory emptyDir, reachable on the host under kubelet's directory. */
  ShmMount podEmptyDir(int minor, int pid, String pod, long size, long used) {
    return add(new ShmMount(Dev.of(0, minor), "/var/lib/kubelet/pods/0d6f/volumes/kubernetes.io~empty-dir/dshm", "/dev/shm",
        MountOrigin.NAMESPACE, "rw,size=" + size / 1024 + "k", "mnt:[" + pid + "]", List.of(pid), pod, usage(size, used)));
  }

  private ShmMount add(ShmMount m) {
    mounts.add(m);
    return m;
  }

  static ShmMount.Usage usage(long size, long used) {
    return new ShmMount.Usage(size, used, size - used, 1000, 900);
  }

  Segment segment(ShmMount m, String name, long size, int uid, Duration age) {
    long nanos = (NOW.minus(age).getEpochSecond()) * 1_000_000_000L;
    Segment s = new Segment(m.dev(), name.getBytes(StandardCharsets.UTF_8), nextIno++, size, (size + 4095) / 4096 * 4096,
        0100600, uid, 1, nanos, nanos);
    segments.add(s);
    return s;
  }

  HostFixture process(int pid, String command, int uid, String user, String container) {
    processes.put(pid, new ProcessInfo(pid, command, uid, user, container, 1000 + pid));
    live.set(pid);
    return this;
  }

  /** {@code pid} maps a file of {@code m} that is already unlinked (how a live NCCL job holds it). */
  HostFixture mapsUnlinked(int pid, ShmMount m, String name, long bytes) {
    holders.add(new FileKey(m.dev(), nextIno++), new HolderRef(pid, Access.MAP, "/dev/shm/" + name + " (deleted)", true, bytes));
    return this;
  }

  HostFixture holds(int pid, Segment s) {
    holders.add(s.key(), new HolderRef(pid, Access.FD, "/dev/shm/" + s.displayName(), false, s.sizeBytes()));
    return this;
  }

  HostFixture notHostPidNamespace() {
    hostPid = false;
    return this;
  }

  /** reap.requireHostPidNamespace: false, as a booted container or a pod without hostPID may set it. */
  HostFixture reapsOutsideTheHostPidNamespace() {
    requireHostPid = false;
    return this;
  }

  HostFixture ranks(int n) {
    ranks = n;
    return this;
  }

  HostFixture gpuMemory(Nvml.Reading reading) {
    gpuMemory = reading;
    return this;
  }

  HostFixture daemon(DaemonProbe.Status status) {
    daemon = status;
    return this;
  }

  Judgement judgement() {
    Snapshot snap = new Snapshot(NOW, mounts, segments, holders.build(), live, processes, List.of(), List.of(), hostPid,
        processes.size() + 1);
    ReapPolicy policy = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(Glob.of("cuda.shm.*")), requireHostPid);
    return Judge.judge(snap, HolderHistory.empty(), policy);
  }

  DoctorContext context() {
    HostPaths paths = paths();
    Nvml.Reading reading = gpuMemory;
    DaemonProbe.Status status = daemon;
    return new DoctorContext(paths, judgement(), GpuHost.read(paths), NamespaceDevices.Lookup.from(paths), ranks,
        DoctorContext.NEWEST_KNOWN, false, () -> reading, () -> status, AdviceSource.NOT_WIRED);
  }

  static Finding only(List<Finding> findings, String id) {
    List<Finding> match = findings.stream().filter(f -> f.id().equals(id)).toList();
    if (match.size() != 1) {
      throw new AssertionError("expected one " + id + " finding, got " + findings);
    }
    return match.get(0);
  }
}
