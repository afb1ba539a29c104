package org.shmguard.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * A command a user would run instead of shmguard (fuser, lsof), timed as a whole process from
 * start to exit (wall, and CPU through the cputime wrapper), with the holder pids it reported, so the bench can check it found what shmguard
 * found.
 */
final class ExternalTool {
  /** One run: wall time, CPU time (user + system) and the distinct pids in its output. */
  record Run(long nanos, long cpuNanos, Set<Integer> pids) {}

  private final String name;
  private final List<String> command;
  private final Function<String, Set<Integer>> pidsOf;

  private ExternalTool(String name, List<String> command, Function<String, Set<Integer>> pidsOf) {
    this.name = name;
    this.command = List.copyOf(command);
    this.pidsOf = pidsOf;
  }

  /** {@code fuser FILE...}: pids on stdout, names and access letters on stderr. */
  static ExternalTool fuser(NativeTools tools, List<String> files) {
    List<String> cmd = new java.util.ArrayList<>(List.of(tools.cputime(), "fuser"));
    cmd.addAll(files);
    return new ExternalTool("fuser", cmd, ExternalTool::allNumbers);
  }

  /**
   * {@code lsof +f -- MOUNT}: every open or mapped file on the filesystem mounted there (+f makes
   * the argument a filesystem; -n and -P only skip network name lookups, which do not apply).
   */
  static ExternalTool lsof(NativeTools tools, String mount) {
    return new ExternalTool("lsof", List.of(tools.cputime(), "lsof", "-n", "-P", "-w", "+f", "--", mount), ExternalTool::secondColumn);
  }

  String name() {
    return name;
  }

  Run run() throws IOException, InterruptedException {
    long start = System.nanoTime();
    Process p = new ProcessBuilder(command).start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    long nanos = System.nanoTime() - start;
    int at = err.lastIndexOf("cputime ");
    if (at < 0) {
      throw new IOException(name + " did not report its CPU time: " + err);
    }
    long cpu = Long.parseLong(err.substring(at + 8).trim());
    return new Run(nanos, cpu, pidsOf.apply(new String(out, StandardCharsets.UTF_8)));
  }

  private static Set<Integer> allNumbers(String out) {
    Set<Integer> pids = new TreeSet<>();
    for (String tok : out.trim().split("\\s+")) {
      String digits = tok.replaceAll("[^0-9]", "");
      if (!digits.isEmpty()) {
        pids.add(Integer.parseInt(digits));
      }
    }
    return pids;
  }

  private static Set<Integer> secondColumn(String out) {
    Set<Integer> pids = new TreeSet<>();
    for (String line : out.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length > 1 && f[1].matches("[0-9]+")) {
        pids.add(Integer.parseInt(f[1]));
      }
    }
    return pids;
  }
}
