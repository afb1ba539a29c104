package org.shmguard.host;

import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A byte buffer reused for every /proc file of one pass, so that reading hundreds of maps files
 * allocates one array rather than one (and a decoded String) per process. Not thread-safe: one per
 * pass.
 *
 * <pre>{@code
 * ReadBuffer buf = new ReadBuffer();
 * if (buf.fill(paths.proc("42", "maps"))) { parse(buf.bytes(), buf.length()); }
 * }</pre>
 */
final class ReadBuffer {
  private byte[] bytes = new byte[64 * 1024];
  private int length;

  /**
   * Reads the whole file; false if the process has gone.
   *
   * @throws AccessDeniedException when the file exists but cannot be read
   */
  boolean fill(Path path) throws AccessDeniedException {
    length = 0;
    try (FileInputStream in = new FileInputStream(path.toString())) {
      for (int n; (n = in.read(bytes, length, bytes.length - length)) >= 0; ) {
        length += n;
        if (length == bytes.length) {
          bytes = Arrays.copyOf(bytes, bytes.length * 2);
        }
      }
      return true;
    } catch (FileNotFoundException e) {
      // FileInputStream says "(No such file or directory)" or "(Permission denied)" in the message.
      String m = e.getMessage();
      if (m != null && m.contains("Permission denied")) {
        throw new AccessDeniedException(path.toString(), null, "permission denied");
      }
      return false;
    } catch (IOException e) {
      if (ProcFiles.isGone(e)) {
        return false;
      }
      throw new AccessDeniedException(path.toString(), null, e.getMessage());
    }
  }

  byte[] bytes() {
    return bytes;
  }

  int length() {
    return length;
  }
}
