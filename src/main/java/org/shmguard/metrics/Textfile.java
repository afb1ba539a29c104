package org.shmguard.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A node_exporter textfile ({@code --collector.textfile.directory}), replaced atomically: written
 * to a dot-file in the same directory (node_exporter reads only {@code *.prom}) and renamed over
 * the old one, so a scrape never sees half a file.
 */
public final class Textfile {
  private final Path file;
  private final PrometheusTextFormatWriter writer = new PrometheusTextFormatWriter(false);

  public Textfile(Path file) {
    this.file = file;
  }

  public void write(MetricSnapshots snapshots) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Path tmp = dir.resolve("." + file.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
    try {
      try (OutputStream out = Files.newOutputStream(tmp)) {
        writer.write(out, snapshots);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  public Path path() {
    return file;
  }
}
