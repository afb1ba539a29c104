package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the daemon sends sd_notify messages: the C listener notifylisten bound to a Unix datagram
 * socket, whose path goes into the daemon's NOTIFY_SOCKET. Each message arrives stamped with
 * CLOCK_MONOTONIC, the clock of System.nanoTime.
 */
final class NotifyListener implements AutoCloseable {
  /** One message and when it arrived (System.nanoTime's clock). */
  record Message(long nanos, String text) {}

  private final Process process;
  private final Path socket;
  private final List<Message> messages = new ArrayList<>();

  NotifyListener(NativeTools tools, Path socket) throws IOException {
    this.socket = socket;
    this.process = new ProcessBuilder(tools.notifyListener(), socket.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    if (!"listening".equals(out.readLine())) {
      throw new IOException("notifylisten did not start on " + socket);
    }
    Thread reader = new Thread(() -> {
      try {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          int sp = line.indexOf(' ');
          synchronized (messages) {
            messages.add(new Message(Long.parseLong(line.substring(0, sp)), line.substring(sp + 1)));
            messages.notifyAll();
          }
        }
      } catch (IOException e) {
        // the listener ended
      }
    }, "notify-listener");
    reader.setDaemon(true);
    reader.start();
  }

  Path socket() {
    return socket;
  }

  /** When the first message containing {@code text} arrived after {@code since}, or -1 by the deadline. */
  long await(String text, long since, long deadlineNanos) throws InterruptedException {
    synchronized (messages) {
      while (true) {
        for (Message m : messages) {
          if (m.nanos() >= since && m.text().contains(text)) {
            return m.nanos();
          }
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return -1;
        }
        messages.wait(Math.max(1, left / 1_000_000));
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    process.waitFor(5, TimeUnit.SECONDS);
  }
}
