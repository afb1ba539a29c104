package org.shmguard.testing;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigException;
import org.shmguard.config.ConfigLoader;

/**
 * Configuration files for tests, written under the sandbox's private /run. Every one sets
 * requireHostPidNamespace: false, since the sandbox is a PID namespace of its own that holds
 * every process the tests start.
 */
public final class TestConfig {
  private TestConfig() {}

  /**
   * A configuration file with {@code yaml}. Unless it says otherwise, the metrics endpoint is off:
   * the sandbox shares the machine's network, and a daemon a test starts must not depend on port
   * 9477 being free there.
   */
  public static Path write(String yaml) {
    try {
      Files.createDirectories(Sandbox.MOUNTS);
      Path f = Files.createTempFile(Sandbox.MOUNTS, "config-", ".yaml");
      boolean saysMetrics = yaml.lines().anyMatch(l -> l.startsWith("metrics:"));
      Files.writeString(f, saysMetrics ? yaml : yaml + (yaml.isEmpty() || yaml.endsWith("\n") ? "" : "\n") + "metrics:\n  listen: \"\"\n");
      return f;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Watches exactly {@code mountPath} with the given grace. */
  public static Path watching(Path mountPath, String grace) {
    return write("mounts: [" + mountPath + "]\nreap:\n  grace: " + grace + "\n  requireHostPidNamespace: false\n");
  }

  /**
   * The configuration {@code yaml} gives, read from the text without a file: for unit tests, which
   * run without root or the sandbox's /run.
   */
  public static Config parse(String yaml) {
    try {
      return ConfigLoader.parse(new StringReader(yaml), "test configuration");
    } catch (ConfigException e) {
      throw new AssertionError(e.format(), e);
    }
  }

  public static Config load(Path file) {
    try {
      return ConfigLoader.load(file);
    } catch (ConfigException e) {
      throw new AssertionError(e.format(), e);
    }
  }
}
