package org.shmguard.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.shmguard.cli.Main;

/** Runs the shmguard command line in this JVM and keeps what it printed. */
public record CliRun(int status, String out, String err) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new CliRun(status, out.toString(), err.toString());
  }

  /** {@code scan --json} with {@code config}, which must succeed. */
  public static JsonNode scanJson(java.nio.file.Path config) {
    CliRun run = of("scan", "--json", "-c", config.toString());
    if (run.status() != 0) {
      throw new AssertionError("scan failed: " + run.err());
    }
    return run.json();
  }

  /**
   * The capabilities the shipped unit leaves the daemon (its CapabilityBoundingSet=), for setpriv's
   * --bounding-set: a test runs shmguard as the unit runs it, not as the test's full root.
   */
  public static final String UNIT_CAPS = "-all,+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";

  /** The command line in a JVM of its own under the unit's capability bounding set, no inherited capabilities. */
  public static Cmd.Result asUnit(String... args) {
    java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("setpriv", "--bounding-set", UNIT_CAPS,
        "--inh-caps", "-all", Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main"));
    command.addAll(java.util.List.of(args));
    return Cmd.exec(command.toArray(String[]::new));
  }

  public JsonNode json() {
    try {
      return JSON.readTree(out);
    } catch (Exception e) {
      throw new AssertionError("not JSON: " + out + err, e);
    }
  }

  /** The mount at {@code path} (its host path) in a {@code scan --json} document. */
  public static JsonNode mountAt(JsonNode scan, java.nio.file.Path path) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.get("path").asText().equals(path.toString())) {
        return m;
      }
    }
    throw new AssertionError(path + " is not among the mounts: " + scan.get("mounts"));
  }

  /** The verdict of the segment {@code name} in a {@code scan --json} document. */
  public static String verdictOf(JsonNode scan, String name) {
    for (JsonNode s : scan.get("segments")) {
      if (s.get("name").asText().equals(name)) {
        return s.get("verdict").asText();
      }
    }
    throw new AssertionError(name + " not in scan: " + scan);
  }

  /** The pids that hold the segment {@code name} in a {@code scan --json} document. */
  public static java.util.List<Integer> holderPids(JsonNode scan, String name) {
    for (JsonNode s : scan.get("segments")) {
      if (s.get("name").asText().equals(name)) {
        java.util.List<Integer> pids = new java.util.ArrayList<>();
        s.get("holders").forEach(h -> pids.add(h.get("pid").asInt()));
        return pids;
      }
    }
    throw new AssertionError(name + " not in scan: " + scan);
  }

  /** The action on the segment {@code name} in a {@code clean --json} document. */
  public static JsonNode actionFor(JsonNode clean, String name) {
    for (JsonNode a : clean.get("actions")) {
      if (a.get("segment").get("name").asText().equals(name)) {
        return a;
      }
    }
    throw new AssertionError(name + " not among the actions: " + clean);
  }
}
