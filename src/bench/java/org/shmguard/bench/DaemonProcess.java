package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code shmguard daemon -c CONFIG} as an external process, as the packages or an operator run it: its
 * log lines stamped as they arrive, its resident memory and CPU time read from /proc, stopped with
 * SIGTERM.
 */
final class DaemonProcess implements AutoCloseable {
  /** One log line and when the bench read it. */
  record Line(long nanos, String text) {}

  private final Process process;
  private final long startNanos;
  private final List<Line> lines = new ArrayList<>();

  private DaemonProcess(Process process, long startNanos) {
    this.process = process;
    this.startNanos = startNanos;
  }

  static DaemonProcess start(Path jar, Path config, List<String> jvmArgs, Path notifySocket) throws IOException {
    return start(Launch.plain(jar, jvmArgs), config, notifySocket);
  }

  /** {@code LAUNCH daemon -c CONFIG}: the launcher as the packages run it, or plain java. */
  static DaemonProcess start(Launch launch, Path config, Path notifySocket) throws IOException {
    List<String> cmd = new ArrayList<>(launch.command());
    cmd.addAll(List.of("daemon", "-c", config.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(launch.env());
    if (notifySocket != null) {
      pb.environment().put("NOTIFY_SOCKET", notifySocket.toString());
    }
    long start = System.nanoTime();
    DaemonProcess d = new DaemonProcess(pb.start(), start);
    d.readLines();
    return d;
  }

  private void readLines() {
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    Thread reader = new Thread(() -> {
      try {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          synchronized (lines) {
            lines.add(new Line(System.nanoTime(), line));
            lines.notifyAll();
          }
        }
      } catch (IOException e) {
        // the daemon ended
      }
    }, "daemon-log");
    reader.setDaemon(true);
    reader.start();
  }

  long startNanos() {
    return startNanos;
  }

  int pid() {
    return (int) process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** When the first log line matching {@code test} arrived, or -1 by the deadline. */
  long awaitLine(Predicate<String> test, long deadlineNanos) throws InterruptedException {
    synchronized (lines) {
      while (true) {
        for (Line l : lines) {
          if (test.test(l.text())) {
            return l.nanos();
          }
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0 || !process.isAlive()) {
          return -1;
        }
        lines.wait(Math.max(1, Math.min(200, left / 1_000_000)));
      }
    }
  }

  List<String> lastLines(int n) {
    synchronized (lines) {
      return lines.subList(Math.max(0, lines.size() - n), lines.size()).stream().map(Line::text).toList();
    }
  }

  /** VmRSS from /proc/PID/status, in KiB. */
  long rssKiB() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Integer.toString(pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
      }
    }
    throw new IOException("no VmRSS for pid " + pid());
  }

  /** CPU time of every thread, from /proc/PID/task/TID/schedstat (nanoseconds on a CPU). */
  long cpuNanos() throws IOException {
    long sum = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Integer.toString(pid()), "task"))) {
      for (Path t : tasks) {
        try {
          sum += Long.parseLong(Files.readString(t.resolve("schedstat")).trim().split(" ")[0]);
        } catch (IOException e) {
          // a thread that ended meanwhile
        }
      }
    }
    return sum;
  }

  /** utime + stime from /proc/PID/stat, in clock ticks (the whole process, ended threads included). */
  long cpuTicks() throws IOException {
    String stat = Files.readString(Path.of("/proc", Integer.toString(pid()), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  /** SIGTERM, as systemd stops a service; SIGKILL if it has not exited in 20 s. */
  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
