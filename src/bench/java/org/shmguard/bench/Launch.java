package org.shmguard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How the bench starts a shmguard JVM: {@link #shipped} as the packages do (packaging/bin/shmguard,
 * its JVM options and the class archive packaging/share/make-cds-archive made, as postinst makes
 * it), or {@link #plain} ({@code java [OPTIONS] -jar shmguard.jar}, the JVM's default options).
 *
 * @param name what the figures call it
 * @param command the words before the shmguard command ("daemon -c CONFIG", "scan --json")
 * @param env environment added to the bench's own
 * @param archive the archive file in use, or null
 */
record Launch(String name, List<String> command, Map<String, String> env, Path archive) {
  Launch {
    command = List.copyOf(command);
    env = Map.copyOf(env);
  }

  static Launch plain(Path jar, List<String> jvmArgs) {
    List<String> cmd = new ArrayList<>();
    cmd.add(java());
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-jar", jar.toString()));
    return new Launch(jvmArgs.isEmpty() ? "default" : "java " + String.join(" ", jvmArgs), cmd, Map.of(), null);
  }

  /**
   * The packages' launcher on {@code jar}, staged in {@code dir} as /usr/share/shmguard and
   * /var/lib/shmguard, after the packages' make-cds-archive ran there (in the sandbox: its training
   * daemon is a dry run that sees only the sandbox's processes). {@code extraJvmArgs} go in
   * SHMGUARD_JAVA_OPTS.
   */
  static synchronized Launch shipped(Path basedir, Path jar, Path dir, String extraJvmArgs)
      throws IOException, InterruptedException {
    Launch made = SHIPPED.get(dir.resolve(extraJvmArgs));
    if (made == null) {
      made = stage(basedir, jar, dir, extraJvmArgs);
      SHIPPED.put(dir.resolve(extraJvmArgs), made);
    }
    return made;
  }

  /** Launches already staged, so make-cds-archive trains once a run. */
  private static final Map<Path, Launch> SHIPPED = new java.util.HashMap<>();

  private static Launch stage(Path basedir, Path jar, Path dir, String extraJvmArgs) throws IOException, InterruptedException {
    Bench.log("shipped: staging the launcher and making its class archive (make-cds-archive)");
    Path home = dir.resolve("share");
    Path state = dir.resolve("state");
    Files.createDirectories(home);
    Files.createDirectories(state);
    Files.copy(jar, home.resolve("shmguard.jar"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Map<String, String> env = Map.of("SHMGUARD_JAVA", java(), "SHMGUARD_HOME", home.toString(),
        "SHMGUARD_STATE", state.toString(), "SHMGUARD_JAVA_OPTS", extraJvmArgs);
    ProcessBuilder pb = new ProcessBuilder("sh", basedir.resolve("packaging/share/make-cds-archive").toString())
        .redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IOException("make-cds-archive failed: " + out);
    }
    Path archive = Files.exists(state.resolve("shmguard.aot")) ? state.resolve("shmguard.aot")
        : Files.exists(state.resolve("shmguard.jsa")) ? state.resolve("shmguard.jsa") : null;
    return new Launch("shipped", List.of("sh", basedir.resolve("packaging/bin/shmguard").toString()), env, archive);
  }

  /** The java of the bench's own JVM: the one every launch runs. */
  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** The command as a person would type it, for the results. */
  String shown() {
    return String.join(" ", command);
  }
}
