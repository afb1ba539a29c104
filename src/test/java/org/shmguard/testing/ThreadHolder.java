package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A holder process whose hold only a thread's view of /proc shows, built with the C compiler from
 * src/test/resources/holders/thread-holder.c: a raw clone() thread with its own fd table
 * ("clone-fd", "clone-map"), or a thread that outlives the main thread ("exit-main-fd",
 * "exit-main-map", after {@link #exitMainThread()}). Ended by pid.
 *
 * <pre>{@code
 * try (ThreadHolder h = ThreadHolder.start("clone-fd", seg)) { ... h.nlink() ... }
 * }</pre>
 */
public final class ThreadHolder implements AutoCloseable {
  private final Process process;
  private final BufferedReader out;
  private final PrintWriter in;

  private ThreadHolder(Process process) {
    this.process = process;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
  }

  public static ThreadHolder start(String mode, Path file) {
    Sandbox.require();
    try {
      ThreadHolder h = new ThreadHolder(new ProcessBuilder(binary().toString(), mode, file.toString())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start());
      h.expect("ready");
      return h;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int pid() {
    return (int) process.pid();
  }

  /** The link count of the held file as the holder sees it: 1 while it is in the tmpfs, 0 once unlinked. */
  public int nlink() {
    in.println("nlink");
    String line = read();
    if (!line.startsWith("nlink ")) {
      throw new AssertionError("holder said " + line);
    }
    return Integer.parseInt(line.substring(6));
  }

  /** Makes the main thread call pthread_exit and waits until the group leader is a zombie. */
  public void exitMainThread() {
    in.println("exit-main");
    expect("main exiting");
    Path stat = Path.of("/proc", Integer.toString(pid()), "stat");
    Eventually.until("the main thread of " + pid() + " has exited", java.time.Duration.ofSeconds(30), () -> {
      try {
        String s = Files.readString(stat);
        return s.substring(s.lastIndexOf(')') + 2).startsWith("Z");
      } catch (IOException e) {
        return false;
      }
    });
  }

  /** Ends the holder (it exits on "exit") and waits until it is gone. */
  @Override
  public void close() {
    in.println("exit");
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private void expect(String want) {
    String line = read();
    if (!want.equals(line)) {
      process.destroyForcibly();
      throw new AssertionError("thread-holder said " + line + ", expected " + want);
    }
  }

  private String read() {
    try {
      return out.readLine();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path binary() {
    return CProgram.build("holders/thread-holder.c", "-pthread");
  }
}
