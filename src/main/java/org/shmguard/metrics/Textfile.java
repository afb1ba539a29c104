package org.shmguard.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.shmguard.host.KeptFile;

/**
 * A node_exporter textfile ({@code --collector.textfile.directory}), 0644, replaced whole after
 * every pass by a rename, so a scrape never sees half a file. Written off the caller's thread
 * through {@link KeptFile}, in a directory only root can change (see RootDirectory): a link or
 * FIFO at the name is replaced, never followed or opened.
 */
public final class Textfile implements AutoCloseable {
  static final int MODE = 0644;
  private final KeptFile file;
  private final PrometheusTextFormatWriter writer = new PrometheusTextFormatWriter(false);

  public Textfile(Path file) {
    this.file = KeptFile.start(file, MODE, false, "the metrics textfile");
  }

  /** Queues a rewrite with {@code snapshots}; returns at once. */
  public void write(MetricSnapshots snapshots) {
    file.replace(() -> {
      ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
      try {
        writer.write(out, snapshots);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return out.toByteArray();
    });
  }

  public Path path() {
    return file.path();
  }

  @Override
  public void close() {
    file.close();
  }
}
