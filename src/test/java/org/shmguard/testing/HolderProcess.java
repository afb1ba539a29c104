package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real process that holds files the way NCCL's ranks do, for tests. Run as its own JVM:
 * {@code HolderProcess MODE PATH [MODE PATH...]} with MODE one of
 * <ul>
 *   <li>{@code fd}: keep an open file descriptor;</li>
 *   <li>{@code map}: map the file MAP_SHARED and close the descriptor;</li>
 *   <li>{@code map-unlink}: map it, close, then unlink it (NCCL's normal state after attach);</li>
 *   <li>{@code create-map:SIZE}: create the file with SIZE bytes, then map it and close.</li>
 * </ul>
 * Prints "ready" once everything is held, then waits until standard input closes.
 */
public final class HolderProcess {
  private static final List<Object> KEEP = new ArrayList<>();

  private HolderProcess() {}

  public static void main(String[] args) throws Exception {
    for (int i = 0; i + 1 < args.length; i += 2) {
      String mode = args[i];
      Path path = Path.of(args[i + 1]);
      if (mode.equals("fd")) {
        KEEP.add(new RandomAccessFile(path.toFile(), "r"));
      } else if (mode.startsWith("create-map:")) {
        Files.write(path, new byte[Integer.parseInt(mode.substring("create-map:".length()))]);
        KEEP.add(map(path));
      } else if (mode.equals("map") || mode.equals("map-unlink")) {
        KEEP.add(map(path));
        if (mode.equals("map-unlink")) {
          Files.delete(path);
        }
      } else {
        throw new IllegalArgumentException("unknown mode " + mode);
      }
    }
    System.out.println("ready");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    while (in.readLine() != null) {
      // hold until stdin closes
    }
  }

  private static MappedByteBuffer map(Path path) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw"); FileChannel ch = f.getChannel()) {
      MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, Math.max(1, ch.size()));
      if (ch.size() > 0) {
        m.put(0, (byte) 1); // touch a page, as a rank writing its buffer would
      }
      return m;
    }
  }
}
