package org.shmguard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A request flood on the advice socket (issue 20, item 5): the shipped daemon's CPU while uid
 * 65534 asks as fast as it can on its 4 connections (and on more), and the latency of root's and
 * another user's requests meanwhile, against the same requests with no flood. Every client is
 * src/test/resources/listeners/socket-client.c, the flood and the other user's run through
 * setpriv. {@code -Dbench.flood=true} with the other parts off runs only this.
 */
final class FloodBench {
  private static final int NOBODY = 65534;
  private static final int OTHER = 65533;
  private static final int WARM = 65532;
  private static final Path SOCKET = Path.of("/run/shmguard/advice.sock");
  private static final int SECONDS = 10;
  /** Each probe's rate: under the per-user limit of 16 a second, as a real caller is. */
  private static final int PROBE_PER_SECOND = 12;
  private static final long SECOND = 1_000_000_000L;
  private static final int CLK_TCK = 100;

  private FloodBench() {}

  static void run(Results r, BenchParams params, NativeTools tools) throws Exception {
    Path dir = Files.createTempDirectory(Path.of("/run"), "shmguard-flood-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path client = dir.resolve("socket-client");
    Process cc = new ProcessBuilder("gcc", "-O2", "-pthread", "-o", client.toString(),
        params.basedir().resolve("src/test/resources/listeners/socket-client.c").toString()).inheritIO().start();
    if (cc.waitFor() != 0) {
      throw new IOException("gcc failed on socket-client.c");
    }
    String extra = System.getProperty("bench.daemonJvmArgs", "").trim();
    Launch launch = Launch.shipped(params.basedir(), params.jar(), params.out().resolve("shipped"), extra);
    Path config = params.out().resolve("daemon-flood.yaml");
    Files.writeString(config, String.join("\n", "mounts:", "  - auto", "reap:", "  requireHostPidNamespace: false",
        "log:", "  level: info", "metrics:", "  listen: \"127.0.0.1:0\"", ""));
    Bench.log("flood: the advice socket under one user's request flood");
    try (NotifyListener notify = new NotifyListener(tools, params.out().resolve("notify-flood.sock"));
         DaemonProcess d = DaemonProcess.start(launch, config, notify.socket())) {
      if (notify.await("READY=1", d.startNanos(), d.startNanos() + 60 * SECOND) < 0) {
        throw new IOException("the daemon sent no READY=1 in 60 s: " + d.lastLines(20));
      }
      String advise = "ADVISE v1 ranks=8";
      // Warm the daemon's code with another user's flood, then let its bucket and the JIT settle.
      flood(client, WARM, 4, 4, advise);
      Thread.sleep(3000);
      probes(r, "flood.quiet.", client, null, d);
      Thread.sleep(2000);
      probes(r, "flood.4conns.", client, 4, d);
      Thread.sleep(3000);
      probes(r, "flood.256conns.", client, 256, d);
      Thread.sleep(3000);
      probes(r, "flood.700conns.", client, 700, d);
      r.put("flood.aliveAtEnd", d.isAlive());
    } finally {
      Files.deleteIfExists(client);
      Files.deleteIfExists(dir);
    }
    r.note("flood", "the shipped daemon (packaging/bin/shmguard with its archive); the flood: uid 65534 asking "
        + "\"ADVISE v1 ranks=8\" back to back on N connections at a time (socket-client flood, one thread each) for "
        + (SECONDS + 2) + " s; cpuPercent: the daemon's utime + stime (/proc/PID/stat) over the " + SECONDS
        + " s in the middle, as % of one core; root.* and other.*: root and uid 65533 each asking CHECK v1 and "
        + "ADVISE v1 ranks=8 in turn, " + PROBE_PER_SECOND + " a second open loop for " + SECONDS + " s (latency "
        + "from each request's due time, ms), at the same time; quiet.*: the same probes with no flood");
    r.target("flood.4conns.cpuPercent", 5, true, "<= 5 % of a core");
  }

  /** Root's and the other user's probes for SECONDS, with uid 65534 flooding on {@code conns} (none if null). */
  private static void probes(Results r, String prefix, Path client, Integer conns, DaemonProcess d) throws Exception {
    Bench.log("flood: %s", conns == null ? "no flood" : conns + " connections");
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      Future<Map<String, String>> flood = conns == null ? null
          : pool.submit(() -> flood(client, NOBODY, conns, SECONDS + 2, "ADVISE v1 ranks=8"));
      if (flood != null) {
        Thread.sleep(1000); // the burst is spent by now
      }
      long ticks0 = d.cpuTicks();
      long t0 = System.nanoTime();
      Callable<Map<String, String>> root = () -> probe(client, null);
      Callable<Map<String, String>> other = () -> probe(client, OTHER);
      Future<Map<String, String>> rootRun = pool.submit(root);
      Future<Map<String, String>> otherRun = pool.submit(other);
      Map<String, String> rootFigures = rootRun.get();
      Map<String, String> otherFigures = otherRun.get();
      double seconds = (System.nanoTime() - t0) / 1e9;
      r.put(prefix + "cpuPercent", 100.0 * (d.cpuTicks() - ticks0) / CLK_TCK / seconds);
      put(r, prefix + "root.", rootFigures);
      put(r, prefix + "other.", otherFigures);
      if (flood != null) {
        Map<String, String> counts = flood.get();
        r.put(prefix + "flood", counts.toString());
        r.put(prefix + "floodPerSecond", Long.parseLong(counts.getOrDefault("sent", "0")) / (double) (SECONDS + 2));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static void put(Results r, String prefix, Map<String, String> figures) {
    for (String k : List.of("sent", "ok")) {
      r.put(prefix + k, Long.parseLong(figures.getOrDefault(k, "0")));
    }
    for (String k : List.of("p50", "p99", "max")) {
      if (figures.containsKey(k)) {
        r.put(prefix + k + "Ms", Double.parseDouble(figures.get(k)));
      }
    }
  }

  private static Map<String, String> probe(Path client, Integer uid) throws Exception {
    return run(as(uid, client, "rate", SOCKET.toString(), Integer.toString(PROBE_PER_SECOND), Integer.toString(SECONDS),
        "CHECK v1", "ADVISE v1 ranks=8"));
  }

  private static Map<String, String> flood(Path client, int uid, int conns, int seconds, String line) throws Exception {
    return run(as(uid, client, "flood", SOCKET.toString(), Integer.toString(conns), Integer.toString(seconds), line));
  }

  private static List<String> as(Integer uid, Path client, String... args) {
    List<String> cmd = new ArrayList<>();
    if (uid != null) {
      cmd.addAll(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups"));
    }
    cmd.add(client.toString());
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Runs a client to its end; its "NAME VALUE" lines. */
  private static Map<String, String> run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
      int sp = line.lastIndexOf(' ');
      if (sp > 0) {
        out.put(line.substring(0, sp), line.substring(sp + 1));
      }
    }
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " exited " + p.exitValue());
    }
    return out;
  }
}
