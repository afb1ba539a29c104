package org.shmguard.metrics;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 answer of the metrics port: status, content type and body, always with
 * {@code Connection: close}. The body may be shared between many connections (the rendered
 * scrape), so it is never written to.
 */
record HttpReply(int status, String contentType, byte[] body) {
  static final String TEXT = "text/plain; charset=utf-8";
  static final String METRICS = "text/plain; version=0.0.4; charset=utf-8";

  HttpReply {
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("status must be an HTTP status code, not " + status);
    }
  }

  static HttpReply text(int status, String body) {
    return new HttpReply(status, TEXT, body.getBytes(StandardCharsets.UTF_8));
  }

  /** The bytes to send: the head, and the body unless the request was HEAD. */
  ByteBuffer[] buffers(boolean headOnly) {
    String head = "HTTP/1.1 " + status + " " + reason() + "\r\n"
        + "Content-Type: " + contentType + "\r\n"
        + "Content-Length: " + body.length + "\r\n"
        + "Cache-Control: no-store\r\n"
        + "Connection: close\r\n\r\n";
    ByteBuffer h = ByteBuffer.wrap(head.getBytes(StandardCharsets.US_ASCII));
    return headOnly ? new ByteBuffer[] {h} : new ByteBuffer[] {h, ByteBuffer.wrap(body).asReadOnlyBuffer()};
  }

  private String reason() {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 431 -> "Request Header Fields Too Large";
      case 500 -> "Internal Server Error";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }
}
