package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * src/test/resources/listeners/socket-client.c, built with cc and run as an ordinary user
 * (setpriv): it holds idle connections to a Unix socket, or asks one request.
 */
public final class SocketClient {
  private final Path dir;
  private final Path binary;

  private SocketClient(Path dir, Path binary) {
    this.dir = dir;
    this.binary = binary;
  }

  public static SocketClient build() throws IOException {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "socket-client-");
    Path src = dir.resolve("socket-client.c");
    try (InputStream in = SocketClient.class.getResourceAsStream("/listeners/socket-client.c")) {
      Files.copy(in, src, StandardCopyOption.REPLACE_EXISTING);
    }
    Path bin = dir.resolve("socket-client");
    Cmd.run("cc", "-O1", "-pthread", "-o", bin.toString(), src.toString());
    Cmd.run("chmod", "-R", "a+rX", dir.toString());
    return new SocketClient(dir, bin);
  }

  /** Its answer to one request, asked as {@code uid}. */
  public String ask(int uid, Path socket, String line) {
    return Cmd.run(as(uid, "ask", socket.toString(), line).toArray(String[]::new));
  }

  /**
   * Starts asking {@code line} as {@code uid} on {@code conns} connections at a time, back to back,
   * for {@code seconds}; {@link Flood#counts} waits for the end.
   */
  public Flood flood(int uid, Path socket, int conns, int seconds, String line) throws IOException {
    Process p = new ProcessBuilder(as(uid, "flood", socket.toString(), Integer.toString(conns),
        Integer.toString(seconds), line)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    return new Flood(p);
  }

  /** A process asking in a loop. */
  public static final class Flood implements AutoCloseable {
    private final Process process;

    private Flood(Process process) {
      this.process = process;
    }

    /** Once it ends: "sent" and each reply code ("OK", "ERR rate-limited", ...) with how many came. */
    public java.util.Map<String, Long> counts() throws IOException, InterruptedException {
      java.util.Map<String, Long> counts = new java.util.LinkedHashMap<>();
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      for (String l; (l = out.readLine()) != null; ) {
        int sp = l.lastIndexOf(' ');
        counts.put(l.substring(0, sp), Long.parseLong(l.substring(sp + 1)));
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        throw new AssertionError("the flooding client did not end");
      }
      return counts;
    }

    @Override
    public void close() throws Exception {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** Starts {@code n} idle connections as {@code uid}; returns once they are connected. */
  public Holding hold(int uid, Path socket, int n) throws IOException {
    Process p = new ProcessBuilder(as(uid, "hold", socket.toString(), Integer.toString(n)))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String first = out.readLine();
    if (first == null || !first.equals("connected " + n)) {
      p.destroyForcibly();
      throw new AssertionError("the idle client did not connect " + n + " times: " + first);
    }
    return new Holding(p, out);
  }

  /** A process holding idle connections. */
  public static final class Holding implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private List<String> replies;

    private Holding(Process process, BufferedReader out) {
      this.process = process;
      this.out = out;
    }

    /** Ends the client; returns, per connection, the first line the server sent it, or "open". */
    public List<String> replies() throws IOException, InterruptedException {
      if (replies == null) {
        process.getOutputStream().close();
        List<String> lines = new ArrayList<>();
        for (String l; (l = out.readLine()) != null; ) {
          lines.add(l);
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
          throw new AssertionError("the idle client did not end");
        }
        replies = lines;
      }
      return replies;
    }

    @Override
    public void close() throws Exception {
      if (replies == null) {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  public void delete() throws IOException {
    Cmd.run("rm", "-rf", dir.toString());
  }

  private List<String> as(int uid, String... args) {
    List<String> cmd = new ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", binary.toString()));
    cmd.addAll(List.of(args));
    return cmd;
  }
}
