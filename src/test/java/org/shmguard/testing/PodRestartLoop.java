package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Seed 002 as a runtime makes it: a "pod" whose /dev/shm is one tmpfs (an emptyDir of medium
 * Memory) bind-mounted into successive real containers (podman and runc, on the cached Debian
 * python root), an inference engine that fills it, crashes and leaves its files, and a restart
 * loop on the same volume with Kubernetes' back-off (10 s, doubling, at most 5 minutes) scaled
 * down by {@link #SCALE}.
 *
 * <pre>{@code
 * try (Podman podman = Podman.onRoot(PodRestartLoop.ROOT); TmpfsMount pod = TmpfsMount.create("size=64m,mode=1777")) {
 *   PodRestartLoop.Outcome o = new PodRestartLoop(podman, pod.path()).run(() -> waitUntilTheDaemonWatchesIt());
 *   o.failedStarts();   // the restarts that found no room
 * }
 * }</pre>
 *
 * <p>The engine ({@link #ENGINE}, a python script standing for vLLM with SGLang's and NCCL's
 * segments) is the container's pid 1. It forks the worker, whose small pid in the container's own PID
 * namespace SGLang's names carry (the test sandbox has processes with the same small pids, as a
 * host has daemons with a pod's pids: they show the volume, but not at /dev/shm), and the worker makes what the families say a crashed engine leaves: vLLM's CPU offload region
 * {@code vllm_offload_<uuid>.mmap} (24 MiB, made with O_EXCL and mapped), two SGLang segments
 * {@code sgl_shm_mm_<pid>_<8 hex>} through multiprocessing.shared_memory (6 MiB each, taken off the
 * resource tracker as a killed tracker leaves them) and two NCCL-shaped {@code nccl-XXXXXX} files
 * (4 MiB each, mapped). The main process then maps the offload region too (every tensor-parallel
 * worker maps it) and makes its own NCCL-shaped file (1 MiB), so the last writer to die is a
 * holder the daemon saw. 45 MiB in all: on a 64 MiB volume a second set finds no room while the
 * first is left. On "crash" on its stdin the main process kills the
 * worker (SIGKILL) and exits 1; a start that finds no room prints "no room" and exits 3; a start
 * in "serve" mode that finds room prints "serving" and runs until its stdin closes.
 */
public final class PodRestartLoop {
  /** The cached Debian root with python3 that the tests share ({@link PythonRoot}). */
  public static final Path ROOT = PythonRoot.PATH;
  /** The host's Python library, bound read-only over the root's minimal one (mmap, multiprocessing). */
  private static final Path PYTHON_LIB = Path.of("/usr/lib/python3.11");
  /** Kubernetes' back-off divided by this: 10 s becomes 1 s, 5 minutes 30 s. */
  public static final int SCALE = 10;
  private static final Duration FIRST_BACKOFF = Duration.ofSeconds(10);
  private static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
  static final String ENGINE = """
      import mmap, os, secrets, signal, sys, uuid
      from multiprocessing import shared_memory, resource_tracker
      MB = 1 << 20
      mode = sys.argv[1]
      kept = []

      def region(path, size):
          fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
          try:
              os.posix_fallocate(fd, 0, size)
              kept.append(mmap.mmap(fd, size))
          finally:
              os.close(fd)

      def worker(w):
          try:
              offload = "/dev/shm/vllm_offload_%s.mmap" % uuid.uuid4()
              region(offload, 24 * MB)
              names = [offload]
              for _ in range(2):
                  s = shared_memory.SharedMemory(name="sgl_shm_mm_%d_%s" % (os.getpid(), secrets.token_hex(4)),
                                                 create=True, size=6 * MB)
                  os.posix_fallocate(s._fd, 0, s.size)
                  resource_tracker.unregister(s._name, "shared_memory")
                  kept.append(s)
                  names.append("/dev/shm/" + s.name)
              for _ in range(2):
                  name = "/dev/shm/nccl-" + secrets.token_hex(3)
                  region(name, 4 * MB)
                  names.append(name)
          except OSError as e:
              os.write(w, ("no room: %s\\n" % e).encode())
              os._exit(3)
          os.write(w, ("made %d %s\\n" % (os.getpid(), " ".join(names))).encode())
          signal.pause()

      r, w = os.pipe()
      child = os.fork()
      if child == 0:
          os.close(r)
          worker(w)
      os.close(w)
      line = os.fdopen(r).readline()
      if not line.startswith("made "):
          print(line.strip() or "no room: the worker died", flush=True)
          os._exit(3)
      fd = os.open(line.split()[2], os.O_RDWR)
      kept.append(mmap.mmap(fd, os.fstat(fd).st_size))
      os.close(fd)
      own = "/dev/shm/nccl-" + secrets.token_hex(3)
      try:
          region(own, 1 * MB)
      except OSError as e:
          print("no room: %s" % e, flush=True)
          os._exit(3)
      print(("serving " if mode == "serve" else "ready ") + line[5:].strip() + " " + own, flush=True)
      command = sys.stdin.readline().strip()
      if command == "crash":
          os.kill(child, signal.SIGKILL)
          os.waitpid(child, 0)
          os._exit(1)
      os._exit(0)
      """;

  private final Podman podman;
  private final Path pod;

  public PodRestartLoop(Podman podman, Path pod) {
    this.podman = podman;
    this.pod = pod;
  }

  /** One container start: what it printed first, how it ended (-1: still running), and its id. */
  public record Start(int attempt, String firstLine, int exitStatus, String containerId, long startedNanos) {
    public boolean failed() {
      return firstLine == null || firstLine.startsWith("no room");
    }
  }

  /**
   * What the loop saw.
   *
   * @param crashed the start that filled the volume and crashed
   * @param crashNanos when "crash" was sent (System.nanoTime): the worker dies within moments
   * @param restarts every later start, in order; the last is running when the loop ended in one
   * @param running the container left running, to be stopped by closing its stdin (null if none)
   */
  public record Outcome(Start crashed, List<String> leftFiles, long crashNanos, List<Start> restarts, Process running) {
    public long failedStarts() {
      return restarts.stream().filter(Start::failed).count();
    }

    public boolean endsRunning() {
      return running != null && running.isAlive() && !restarts.isEmpty() && !restarts.get(restarts.size() - 1).failed();
    }
  }

  /**
   * Starts the engine, waits for it to fill the volume, runs {@code beforeCrash} (a test waits
   * there until its daemon watches the engine's processes), crashes it, and restarts it on the
   * same volume with the scaled back-off until one start runs or {@code maxRestarts} have failed.
   */
  public Outcome run(Runnable beforeCrash, int maxRestarts) throws IOException, InterruptedException {
    Path engine = Files.createDirectories(podman.dir().resolve("engine"));
    Files.writeString(engine.resolve("engine.py"), ENGINE);
    Container first = start(engine, "crash", 0);
    if (first.firstLine == null || !first.firstLine.startsWith("ready ")) {
      throw new IllegalStateException("the engine did not fill the volume: " + first.firstLine);
    }
    List<String> files = List.of(first.firstLine.substring("ready ".length()).split(" ")).subList(1, 7);
    beforeCrash.run();
    long crashAt = System.nanoTime();
    first.send("crash");
    int crashStatus = first.process.waitFor();
    Start crashed = new Start(0, first.firstLine, crashStatus, first.id(), first.startedNanos);
    List<Start> restarts = new ArrayList<>();
    Duration backoff = FIRST_BACKOFF.dividedBy(SCALE);
    for (int attempt = 1; attempt <= maxRestarts; attempt++) {
      Thread.sleep(backoff.toMillis());
      Container c = start(engine, "serve", attempt);
      if (c.firstLine != null && c.firstLine.startsWith("serving ")) {
        restarts.add(new Start(attempt, c.firstLine, -1, c.id(), c.startedNanos));
        return new Outcome(crashed, files, crashAt, restarts, c.process);
      }
      int status = c.process.waitFor();
      restarts.add(new Start(attempt, c.firstLine, status, c.id(), c.startedNanos));
      backoff = backoff.multipliedBy(2);
      if (backoff.compareTo(MAX_BACKOFF.dividedBy(SCALE)) > 0) {
        backoff = MAX_BACKOFF.dividedBy(SCALE);
      }
    }
    return new Outcome(crashed, files, crashAt, restarts, null);
  }

  private Container start(Path engine, String mode, int attempt) throws IOException {
    Path cid = podman.dir().resolve("cid-" + attempt);
    long startedNanos = System.nanoTime();
    Process p = podman.run(List.of("-i", "--cidfile", cid.toString(), "-v", pod + ":/dev/shm",
        "-v", PYTHON_LIB + ":" + PYTHON_LIB + ":ro", "-v", engine + ":/engine:ro"),
        "python3", "-B", "/engine/engine.py", mode);
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    return new Container(p, out.readLine(), cid, startedNanos);
  }

  private record Container(Process process, String firstLine, Path cidFile, long startedNanos) {
    String id() {
      try {
        return Files.exists(cidFile) ? Files.readString(cidFile).strip() : null;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    void send(String line) throws IOException {
      OutputStream in = process.getOutputStream();
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }
  }
}
