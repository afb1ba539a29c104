package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.shmguard.nativ.Posix;

/**
 * A fresh tmpfs with segment files and the holder processes of the C fixture (shmfixture): a
 * quarter of the segments held, by fd, by mapping, and by mapping of a then unlinked file; every
 * {@code threadedEvery}-th holder also has three sleeping threads, two sharing its fd table and
 * one with a copy of its own (so a scan must read that thread's table too, and finds the same
 * holders). Closing it ends the holders (by pid, through their parent) and unmounts the tmpfs.
 *
 * <pre>{@code
 * try (Fixture f = Fixture.create(tools, Path.of("/dev/shm"), 400, 4000, 4)) { ... f.holders() ... }
 * }</pre>
 */
final class Fixture implements AutoCloseable {
  static final long SEGMENT_BYTES = 4096;

  /** One holder process and the names of the segments it holds that are still linked. */
  record HolderProc(int pid, List<String> linked) {
    HolderProc {
      linked = List.copyOf(linked);
    }
  }

  private final Path mount;
  private final Process parent;
  private final List<HolderProc> holders;
  private final int segments;
  private final int held;

  private Fixture(Path mount, Process parent, List<HolderProc> holders, int segments, int held) {
    this.mount = mount;
    this.parent = parent;
    this.holders = List.copyOf(holders);
    this.segments = segments;
    this.held = held;
  }

  /** Mounts a tmpfs of {@code size} at {@code mount}, over whatever is there. */
  static void mountTmpfs(Path mount, String size) throws IOException, InterruptedException {
    Files.createDirectories(mount);
    run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=1777,nosuid,nodev", "shmguard-bench", mount.toString());
  }

  static void unmount(Path mount) throws IOException, InterruptedException {
    run("umount", mount.toString());
  }

  static Fixture create(NativeTools tools, Path mount, int processes, int segments, int threadedEvery)
      throws IOException, InterruptedException {
    int held = BenchParams.heldOf(segments);
    mountTmpfs(mount, "2g"); // a limit, not an allocation: room for the fixture and the burst
    Process p = new ProcessBuilder(tools.fixture(), mount.toString(), Integer.toString(segments),
        Integer.toString(processes), Integer.toString(held), Long.toString(SEGMENT_BYTES), "0",
        Integer.toString(threadedEvery))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    List<HolderProc> holders = new ArrayList<>();
    for (String line = out.readLine(); line != null && !line.equals("ready"); line = out.readLine()) {
      String[] f = line.split(" ", 3);
      List<String> names = f.length < 3 || f[2].isEmpty() ? List.of() : Arrays.asList(f[2].split(","));
      holders.add(new HolderProc(Integer.parseInt(f[1]), names));
    }
    if (holders.size() != processes) {
      p.destroyForcibly();
      unmount(mount);
      throw new IOException("shmfixture started " + holders.size() + " of " + processes + " holders");
    }
    return new Fixture(mount, p, holders, segments, held);
  }

  Path mount() {
    return mount;
  }

  List<HolderProc> holders() {
    return holders;
  }

  /** Segment files created. */
  int segments() {
    return segments;
  }

  /** Held segments that stay linked (by fd or by mapping): the ones a scan lists as held. */
  int heldLinked() {
    return held - held / 3;
  }

  /** Held segments that the fixture mapped and then unlinked: hidden bytes. */
  int heldUnlinked() {
    return held / 3;
  }

  /** The segment files now in the mount, by name. */
  List<String> files() throws IOException {
    try (Stream<Path> s = Files.list(mount)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("nccl-")).sorted().toList();
    }
  }

  /**
   * Sets every segment file's mtime (and so its ctime) to now: files the rows before aged past the
   * daemon's grace are new again, so that a daemon started next finds them as it would just after
   * a job ended, and reaps the unheld ones when the grace ends, after READY.
   */
  void touch() throws IOException {
    java.nio.file.attribute.FileTime now = java.nio.file.attribute.FileTime.from(java.time.Instant.now());
    for (String name : files()) {
      Files.setLastModifiedTime(mount.resolve(name), now);
    }
  }

  /** SIGKILL one holder, as the OOM killer would; its parent reaps it. */
  static void kill(HolderProc h) {
    int errno = Posix.get().kill(h.pid(), 9);
    if (errno != 0) {
      throw new IllegalStateException("kill " + h.pid() + " failed: errno " + errno);
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try (OutputStream in = parent.getOutputStream()) {
      in.flush(); // closing stdin tells shmfixture to end its holders and exit
    }
    if (!parent.waitFor(30, TimeUnit.SECONDS)) {
      parent.destroyForcibly().waitFor();
    }
    unmount(mount);
  }

  static void run(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
  }
}
