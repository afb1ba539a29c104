package org.shmguard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The cold path as root types it: `shmguard scan --json` through packaging/bin/shmguard while the
 * measured daemon runs (the python client answers from its last pass, no JVM), against `lsof
 * /dev/shm` on the same fixture, the two alternated run by run. Run while the daemon bench's
 * daemon and fixture are up.
 */
final class ColdScanBench {
  private static final int RUNS = 21;

  private ColdScanBench() {}

  static void run(Results r, Path socket) throws IOException, InterruptedException {
    Path launcher = Path.of("packaging/bin/shmguard").toAbsolutePath();
    Path client = Path.of("packaging/share/shmguard_client.py").toAbsolutePath();
    if (!Files.exists(socket) || !Files.isExecutable(Path.of("/usr/bin/python3")) || !Files.exists(client)) {
      r.missing("scanCliDaemon.medianMs", "needs the daemon's socket " + socket + ", /usr/bin/python3 and " + client);
      return;
    }
    Bench.log("daemon: cold scan --json from the daemon against lsof /dev/shm");
    ProcessBuilder scan = new ProcessBuilder(launcher.toString(), "scan", "--json");
    scan.environment().put("SHMGUARD_ADVICE_SOCKET", socket.toString());
    scan.environment().put("SHMGUARD_CLIENT", client.toString());
    scan.environment().put("SHMGUARD_JAVA", "/nonexistent/java"); // the daemon answers, or this fails
    byte[] first = output(scan);
    JsonNode doc = new ObjectMapper().readTree(first);
    if (!doc.path("source").path("daemon").asBoolean()) {
      r.missing("scanCliDaemon.medianMs", "the daemon did not answer scan --json: " + doc.path("source"));
      return;
    }
    ProcessBuilder lsof = new ProcessBuilder("lsof", Bench.SHM.toString());
    List<Long> scans = new ArrayList<>();
    List<Long> lsofs = new ArrayList<>();
    for (int i = 0; i < RUNS; i++) {
      scans.add(timed(scan, true));
      lsofs.add(timed(lsof, false)); // lsof exits 1 when it lists nothing
    }
    double s = Stats.ofNanos(scans).median();
    double l = Stats.ofNanos(lsofs).median();
    r.put("scanCliDaemon.medianMs", s);
    r.put("scanCliDaemon.lsofMedianMs", l);
    r.put("scanCliDaemon.ratioLsof", s / l);
    r.put("scanCliDaemon.processes", doc.path("pass").path("processes").asInt(-1));
    r.put("scanCliDaemon.bytes", first.length);
    r.note("scanCliDaemon.medianMs", "packaging/bin/shmguard scan --json as root while the daemon runs (the python client "
        + "prints the daemon's rendering of its last pass), and lsof " + Bench.SHM + ", alternated, median of " + RUNS);
  }

  private static byte[] output(ProcessBuilder pb) throws IOException, InterruptedException {
    Process p = pb.redirectError(ProcessBuilder.Redirect.DISCARD).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .start();
    byte[] out = p.getInputStream().readAllBytes();
    if (p.waitFor() != 0) {
      throw new IOException(pb.command() + " exited " + p.exitValue());
    }
    return out;
  }

  /** One timed run; a run that fails is no measurement, so it stops the bench's figure. */
  private static long timed(ProcessBuilder pb, boolean mustSucceed) throws IOException, InterruptedException {
    ProcessBuilder discarding = new ProcessBuilder(pb.command()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    discarding.environment().clear();
    discarding.environment().putAll(pb.environment());
    long t = System.nanoTime();
    Process p = discarding.start();
    int status = p.waitFor();
    long took = System.nanoTime() - t;
    if (mustSucceed && status != 0) {
      throw new IOException(pb.command() + " exited " + status + " in a timed run");
    }
    return took;
  }
}
