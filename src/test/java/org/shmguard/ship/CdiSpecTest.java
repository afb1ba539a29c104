package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.shmguard.cli.Main;

/** {@code shmguard cdi generate}: the spec the packages ship, and the file it writes. */
class CdiSpecTest {
  @Test
  void theShippedSpecIsWhatCdiGenerateWritesForTheShippedConfiguration() throws Exception {
    StringWriter out = new StringWriter();
    assertThat(Main.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "cdi", "generate", "-c", "config/shmguard.yaml"))
        .isZero();
    assertThat(out.toString()).isEqualTo(Files.readString(Path.of("packaging/cdi/shmguard.yaml")));

    JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(out.toString());
    assertThat(spec.get("cdiVersion").asText()).isEqualTo("0.3.0");
    assertThat(spec.get("kind").asText()).isEqualTo("shmguard.io/advice");
    JsonNode edits = spec.get("devices").get(0).get("containerEdits");
    assertThat(spec.get("devices").get(0).get("name").asText()).isEqualTo("socket");
    assertThat(edits.get("env").get(0).asText()).isEqualTo("SHMGUARD_ADVICE_SOCKET=/run/shmguard/advice.sock");
    assertThat(edits.get("mounts").get(0).get("hostPath").asText()).isEqualTo("/run/shmguard");
    assertThat(edits.get("mounts").get(0).get("options").toString()).contains("\"ro\"");
  }

  @Test
  void outputReplacesTheFileWholeReadableByAll() throws Exception {
    Path dir = Files.createTempDirectory("cdi-");
    Path config = dir.resolve("shmguard.yaml");
    Files.writeString(config, "advice:\n  socket: /run/gpu-shm/advice.sock\n");
    Path spec = dir.resolve("cdi/shmguard.yaml");
    try {
      Files.createDirectories(spec.getParent());
      Files.writeString(spec, "old");
      assertThat(Main.run("cdi", "generate", "-c", config.toString(), "--output", spec.toString())).isZero();
      assertThat(Files.readString(spec)).contains("SHMGUARD_ADVICE_SOCKET=/run/gpu-shm/advice.sock")
          .contains("hostPath: \"/run/gpu-shm\"\n").doesNotContain("old");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(spec))).isEqualTo("rw-r--r--");
      Files.writeString(config, "advice:\n  socket: \"/run/odd: #dir/advice.sock\"\n");
      assertThat(Main.run("cdi", "generate", "-c", config.toString(), "--output", spec.toString())).isZero();
      JsonNode odd = new ObjectMapper(new YAMLFactory()).readTree(spec.toFile()).get("devices").get(0).get("containerEdits");
      assertThat(odd.get("mounts").get(0).get("hostPath").asText()).as("a path YAML would misread, quoted").isEqualTo("/run/odd: #dir");
      assertThat(odd.get("env").get(0).asText()).isEqualTo("SHMGUARD_ADVICE_SOCKET=/run/odd: #dir/advice.sock");
      try (var left = Files.list(spec.getParent())) {
        assertThat(left).containsExactly(spec);
      }
    } finally {
      Files.deleteIfExists(spec);
      Files.deleteIfExists(spec.getParent());
      Files.deleteIfExists(config);
      Files.deleteIfExists(dir);
    }
  }
}
