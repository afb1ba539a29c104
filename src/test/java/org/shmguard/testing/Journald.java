package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;

/**
 * A real systemd-journald for one test, inside the sandbox's private /run: it listens on
 * /run/systemd/journal/socket and keeps a volatile journal in /run/log/journal, read back with
 * journalctl -D. Stopped by pid, and its files removed, on close.
 */
public final class Journald implements AutoCloseable {
  static final Path BINARY = Path.of("/lib/systemd/systemd-journald");
  private static final Path JOURNAL_DIR = Path.of("/run/log/journal");
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Process process;

  private Journald(Process process) {
    this.process = process;
  }

  public static Journald start() throws IOException {
    Sandbox.require();
    assumeTrue(Files.isExecutable(BINARY), "needs systemd-journald (Debian package systemd)");
    assumeTrue(Files.exists(Path.of("/etc/machine-id")), "journald needs /etc/machine-id");
    Process p = new ProcessBuilder(BINARY.toString()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    Eventually.until("journald's socket", Duration.ofSeconds(30), () -> Files.exists(JournalAlertSink.SOCKET));
    return new Journald(p);
  }

  /** Every entry journald stored whose field {@code name} has {@code value}. */
  public static List<JsonNode> entries(String name, String value) {
    String out = Cmd.run("journalctl", "-D", JOURNAL_DIR.toString(), "-o", "json", "--no-pager", name + "=" + value);
    List<JsonNode> nodes = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isBlank()) {
        try {
          nodes.add(JSON.readTree(line));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return nodes;
  }

  /** Stops journald (SIGTERM, by pid) without removing its files. */
  public void stop() {
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() throws IOException {
    stop();
    for (Path p : List.of(JOURNAL_DIR, Path.of("/run/systemd/journal"))) {
      if (Files.exists(p)) {
        try (Stream<Path> walk = Files.walk(p)) {
          for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(f);
          }
        }
      }
    }
  }
}
