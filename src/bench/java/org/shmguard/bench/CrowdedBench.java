package org.shmguard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's memory on a crowded mount (issue 12): a private tmpfs of 1,000,000 empty files plus
 * 12,000 empty {@code nccl-} files (more than one pass examines), the daemon started with exactly
 * the unit's JVM options (systemd/shmguard.service's ExecStart, -Xmx96m), and measured: time to
 * READY, time until it has drained the NCCL files, its RSS (after READY, at the end, the most seen),
 * and one {@code shmguard scan --json} of the mount under the same options. Separate from
 * {@link DaemonBench}: other fixtures, other JVM options.
 */
final class CrowdedBench {
  private static final long SECOND = 1_000_000_000L;
  static final int FILES = 1_000_000;
  static final int NCCL_EMPTY = 12_000;

  private CrowdedBench() {}

  static void run(Results r, BenchParams params, NativeTools tools) throws Exception {
    Path bin = params.out().resolve("bin").resolve("mkfiles");
    gcc(params.basedir().resolve("src/test/resources/memory/mkfiles.c"), bin);
    Path mnt = params.out().resolve("crowded-mnt");
    Files.createDirectories(mnt);
    exec("mount", "-t", "tmpfs", "-o", "size=64m,mode=1777,nr_inodes=" + (FILES + NCCL_EMPTY + 1000), "shmguard-bench",
        mnt.toString());
    try {
      Bench.log("crowded: creating %d files", FILES + NCCL_EMPTY);
      exec(bin.toString(), mnt.toString(), "file-", String.valueOf(FILES));
      exec(bin.toString(), mnt.toString(), "nccl-empty-", String.valueOf(NCCL_EMPTY));
      Path config = params.out().resolve("crowded.yaml");
      Files.writeString(config, String.join("\n", "mounts: [" + mnt + "]", "reap:", "  grace: 10s",
          "  requireHostPidNamespace: false", "metrics:", "  listen: \"\"", ""));
      List<String> jvm = unitJvmOptions(params.basedir());
      r.put("crowded.command", "java " + String.join(" ", jvm) + " -jar " + params.jar() + " daemon -c CONFIG");
      r.put("crowded.files", FILES + NCCL_EMPTY);
      scan(r, params, jvm, config);
      daemon(r, params, tools, jvm, config, mnt);
    } finally {
      exec("umount", "-l", mnt.toString());
    }
  }

  private static void daemon(Results r, BenchParams params, NativeTools tools, List<String> jvm, Path config, Path mnt)
      throws Exception {
    Path socket = params.out().resolve("crowded-notify.sock");
    try (NotifyListener notify = new NotifyListener(tools, socket);
         DaemonProcess d = DaemonProcess.start(params.jar(), config, jvm, socket)) {
      long ready = notify.await("READY=1", d.startNanos(), d.startNanos() + 120 * SECOND);
      if (ready < 0) {
        r.missing("crowded.readyMs", "no READY=1 in 120 s: " + d.lastLines(10));
        return;
      }
      r.put("crowded.readyMs", (ready - d.startNanos()) / 1e6);
      r.put("crowded.rssAtReadyMiB", d.rssKiB() / 1024.0);
      long maxRss = 0;
      long drained = -1;
      long end = System.nanoTime() + 120 * SECOND;
      while (System.nanoTime() < end && d.isAlive()) {
        maxRss = Math.max(maxRss, d.rssKiB());
        if (drained < 0 && countFiles(mnt) <= FILES) {
          drained = System.nanoTime();
          end = Math.min(end, drained + 30 * SECOND); // then 30 s of watching the quiet daemon
        }
        Thread.sleep(250);
      }
      if (drained > 0) {
        r.put("crowded.drainedMs", (drained - d.startNanos()) / 1e6);
      } else {
        r.missing("crowded.drainedMs", "the " + NCCL_EMPTY + " empty NCCL files were not all reaped in 120 s");
      }
      r.put("crowded.rssMiB", d.rssKiB() / 1024.0);
      r.put("crowded.rssMaxMiB", maxRss / 1024.0);
      r.put("crowded.alive", d.isAlive());
      r.note("crowded.rssMiB", "VmRSS of the daemon with the unit's JVM options among " + FILES + " files and "
          + NCCL_EMPTY + " empty nccl- files: at READY, 30 s after the NCCL files were drained (rssMiB), and the most "
          + "seen in between, sampled every 250 ms (rssMaxMiB)");
    }
  }

  private static void scan(Results r, BenchParams params, List<String> jvm, Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvm);
    cmd.addAll(List.of("-jar", params.jar().toString(), "scan", "--json", "-c", config.toString()));
    long t = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    boolean done = p.waitFor(300, TimeUnit.SECONDS);
    r.put("crowded.scanMs", (System.nanoTime() - t) / 1e6);
    r.put("crowded.scanExit", done ? p.exitValue() : -1);
  }

  /** The unit's ExecStart JVM options: what an installed daemon runs with. */
  static List<String> unitJvmOptions(Path basedir) throws IOException {
    String exec = Files.readString(basedir.resolve("systemd/shmguard.service")).lines()
        .filter(l -> l.startsWith("ExecStart=")).findFirst().orElseThrow();
    List<String> words = Arrays.asList(exec.substring("ExecStart=".length()).trim().split("\\s+"));
    return List.copyOf(words.subList(1, words.indexOf("-jar")));
  }

  private static long countFiles(Path mnt) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("stat", "-f", "-c", "%c %d", mnt.toString()).start();
    String[] f = new String(p.getInputStream().readAllBytes()).trim().split(" ");
    p.waitFor();
    return Long.parseLong(f[0]) - Long.parseLong(f[1]) - 1; // used inodes less the root directory
  }

  private static void gcc(Path src, Path out) throws IOException, InterruptedException {
    Files.createDirectories(out.getParent());
    if (new ProcessBuilder("gcc", "-O2", "-Wall", "-o", out.toString(), src.toString()).inheritIO().start().waitFor() != 0) {
      throw new IOException("gcc failed on " + src);
    }
  }

  private static void exec(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed");
    }
  }
}
