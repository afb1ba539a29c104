package org.shmguard.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * The Prometheus text of {@link ShmMetrics}, rendered once per change (a pass, an alert, an
 * answer, a remount) and then served as the same bytes to every scrape, so a thousand scrapes
 * cost one render and no pass work. Used by the metrics port's one thread only.
 */
final class ScrapeText {
  private final ShmMetrics metrics;
  private final PrometheusTextFormatWriter writer = new PrometheusTextFormatWriter(false);
  private long renderedAt = Long.MIN_VALUE;
  private byte[] text;

  ScrapeText(ShmMetrics metrics) {
    this.metrics = metrics;
  }

  /** The text as of the latest change; the array is shared and must not be written to. */
  byte[] current() throws IOException {
    long changes = metrics.changes(); // read before rendering: a change during the render renders again next time
    if (text == null || changes != renderedAt) {
      ByteArrayOutputStream out = new ByteArrayOutputStream(text == null ? 8192 : text.length + 1024);
      writer.write(out, metrics.scrape());
      text = out.toByteArray();
      renderedAt = changes;
    }
    return text;
  }
}
