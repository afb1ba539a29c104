package org.shmguard.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's memory beside many ordinary users' namespaces (issue 20, item 3): {@code
 * bench.userNamespaces} user namespaces of uid 65534 ({@code setpriv} + {@code unshare -Urm}),
 * each kept alive by a sleeping process, each with a tmpfs at its /dev/shm holding {@code
 * bench.userNamespaceFiles} names: one empty {@code nccl-} file and hard links of it (many names,
 * one inode: a million separate tmpfs inodes cost about 1 KiB of kernel memory each, more than the
 * machine has at this scale). Three leaks wait on the host's (the sandbox's) /dev/shm. The daemon
 * runs with the unit's JVM options (-Xmx96m) and the default configuration but for a short grace:
 * measured are the time to READY, to the leaks' reap, its RSS (at READY, the most seen over a
 * minute, at the end), whether it is alive, and what it said it did not examine; then one
 * {@code scan --json} under the same options.
 */
final class UserNamespacesBench {
  private static final long SECOND = 1_000_000_000L;
  private static final int LEAKS = 3;
  private static final int BATCH = 16;

  private UserNamespacesBench() {}

  static void run(Results r, BenchParams params, NativeTools tools, int namespaces, int files) throws Exception {
    // /run is the sandbox's own tmpfs (0755): a helper there is one uid 65534 can run
    Path bin = Path.of("/run/shmguard-bench-mkfiles");
    gcc(params.basedir().resolve("src/test/resources/memory/mkfiles.c"), bin);
    long availableBefore = memAvailableKiB();
    long slabBefore = meminfoKiB("Slab:");
    List<Process> users = new ArrayList<>();
    List<Path> leaks = new ArrayList<>();
    try {
      Bench.log("userNamespaces: %d namespaces of uid 65534, %d names each", namespaces, files);
      long t = System.nanoTime();
      for (int i = 0; i < namespaces; i += BATCH) {
        List<Process> batch = new ArrayList<>();
        for (int k = i; k < Math.min(namespaces, i + BATCH); k++) {
          batch.add(startUser(bin, files));
        }
        for (Process p : batch) {
          users.add(p);
          String line = new String(p.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
          if (!line.equals("ready\n")) {
            throw new IOException("a user namespace did not start: " + line
                + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
          }
        }
      }
      r.put("userNamespaces.count", namespaces);
      r.put("userNamespaces.namesEach", files);
      r.put("userNamespaces.setupMs", (System.nanoTime() - t) / 1e6);
      r.put("userNamespaces.kernelMiB", (availableBefore - memAvailableKiB()) / 1024.0);
      r.put("userNamespaces.slabMiB", (meminfoKiB("Slab:") - slabBefore) / 1024.0);
      for (int i = 0; i < LEAKS; i++) {
        Path leak = Bench.SHM.resolve("nccl-UserNsLeak" + i);
        Files.write(leak, new byte[65_536]);
        leaks.add(leak);
      }
      Path config = params.out().resolve("userns.yaml");
      Files.writeString(config, String.join("\n", "mounts: [auto]", "reap:", "  grace: 10s",
          "  requireHostPidNamespace: false", "metrics:", "  listen: \"\"", ""));
      List<String> jvm = CrowdedBench.unitJvmOptions(params.basedir());
      r.put("userNamespaces.command", "java " + String.join(" ", jvm) + " -jar " + params.jar() + " daemon -c CONFIG");
      daemon(r, "userNamespaces.", params, tools, jvm, config, leaks);
      scan(r, params, jvm, config);
      // the same with every namespace reported (namespaces.reportLimit at least their number)
      Path all = params.out().resolve("userns-all.yaml");
      Files.writeString(all, Files.readString(config) + "namespaces:\n  reportLimit: " + Math.min(100_000, namespaces) + "\n");
      for (Path leak : leaks) {
        Files.write(leak, new byte[65_536]);
      }
      daemon(r, "userNamespaces.all.", params, tools, jvm, all, leaks);
    } finally {
      for (Process p : users) {
        p.destroyForcibly();
      }
      for (Process p : users) {
        p.waitFor(10, TimeUnit.SECONDS);
      }
      for (Path leak : leaks) {
        Files.deleteIfExists(leak);
      }
      Files.deleteIfExists(bin);
    }
  }

  /** uid 65534 in a user and mount namespace of its own, its /dev/shm a tmpfs of {@code files} names, then asleep. */
  private static Process startUser(Path mkfiles, int files) throws IOException {
    String script = """
        set -e
        mount -t tmpfs -o size=1m,nr_inodes=$(($2 + 16)) bench-userns /dev/shm
        : > /dev/shm/nccl-linked
        "$1" /dev/shm nccl- $(($2 - 1)) 0 nccl-linked
        echo ready
        exec sleep 100000
        """;
    return new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "unshare", "--user",
        "--map-root-user", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", mkfiles.toString(),
        Integer.toString(files)).redirectErrorStream(true).start();
  }

  private static void daemon(Results r, String prefix, BenchParams params, NativeTools tools, List<String> jvm,
      Path config, List<Path> leaks) throws Exception {
    Path socket = params.out().resolve("userns-notify.sock");
    try (NotifyListener notify = new NotifyListener(tools, socket);
         DaemonProcess d = DaemonProcess.start(params.jar(), config, jvm, socket)) {
      long ready = notify.await("READY=1", d.startNanos(), d.startNanos() + 300 * SECOND);
      if (ready < 0) {
        r.missing(prefix + "readyMs", "no READY=1 in 300 s: " + d.lastLines(10));
        r.put(prefix + "alive", d.isAlive());
        return;
      }
      r.put(prefix + "readyMs", (ready - d.startNanos()) / 1e6);
      r.put(prefix + "rssAtReadyMiB", d.rssKiB() / 1024.0);
      long maxRss = 0;
      long reaped = -1;
      long end = System.nanoTime() + 180 * SECOND;
      while (System.nanoTime() < end && d.isAlive()) {
        maxRss = Math.max(maxRss, d.rssKiB());
        if (reaped < 0 && leaks.stream().noneMatch(Files::exists)) {
          reaped = System.nanoTime();
          end = Math.min(end, reaped + 60 * SECOND); // then a minute of passes, sweeps and rediscoveries
        }
        Thread.sleep(250);
      }
      if (reaped > 0) {
        r.put(prefix + "leaksReapedMs", (reaped - d.startNanos()) / 1e6);
      } else {
        r.missing(prefix + "leaksReapedMs", "the host's " + LEAKS + " leaks were not reaped in 180 s");
      }
      r.put(prefix + "rssMiB", d.rssKiB() / 1024.0);
      r.put(prefix + "rssMaxMiB", maxRss / 1024.0);
      r.put(prefix + "alive", d.isAlive());
      long said = d.awaitLine(l -> l.contains("not examined in this pass"), System.nanoTime() + SECOND);
      r.put(prefix + "notExamined", said < 0 ? "(no line)" : d.lastLines(1_000_000).stream()
          .filter(l -> l.contains("not examined in this pass")).reduce((a, b) -> b).orElse("(no line)")
          .replaceFirst(".*not examined in this pass: ", ""));
      r.note(prefix + "rssMiB", "VmRSS of the daemon with the unit's JVM options beside the users' namespaces: "
          + "at READY, a minute after the host's leaks were reaped (rssMiB), and the most seen in between, sampled "
          + "every 250 ms (rssMaxMiB); kernelMiB and slabMiB are what the namespaces and their names took from MemAvailable and added to Slab (others' work on the machine moves both)");
    }
  }

  private static void scan(Results r, BenchParams params, List<String> jvm, Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvm);
    cmd.addAll(List.of("-jar", params.jar().toString(), "scan", "--json", "-c", config.toString()));
    Path out = params.out().resolve("userns-scan.json");
    long t = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(out.toFile()).start();
    boolean done = p.waitFor(300, TimeUnit.SECONDS);
    r.put("userNamespaces.scanMs", (System.nanoTime() - t) / 1e6);
    r.put("userNamespaces.scanExit", done ? p.exitValue() : -1);
    if (done && p.exitValue() == 0) {
      var coverage = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toFile()).path("coverage");
      r.put("userNamespaces.scanReportOnlyMounts", coverage.path("reportOnlyMounts").asInt());
      r.put("userNamespaces.scanNamespacesLeftOut", coverage.path("namespacesLeftOut").asInt());
      r.put("userNamespaces.scanReportOnlyFiles", coverage.path("reportOnlyFiles").asLong());
    }
  }

  private static long memAvailableKiB() throws IOException {
    return meminfoKiB("MemAvailable:");
  }

  private static long meminfoKiB(String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
      if (line.startsWith(field)) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }

  private static void gcc(Path src, Path out) throws IOException, InterruptedException {
    if (new ProcessBuilder("gcc", "-O2", "-Wall", "-o", out.toString(), src.toString()).inheritIO().start().waitFor() != 0) {
      throw new IOException("gcc failed on " + src);
    }
  }
}
