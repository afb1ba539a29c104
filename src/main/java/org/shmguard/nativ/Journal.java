package org.shmguard.nativ;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * sd_journal_sendv(3) through JNA: one structured journal entry per call, sent over journald's
 * native socket.
 *
 * <pre>{@code
 * Journal j = Journal.load();
 * if (j.available()) j.send(Map.of("MESSAGE", "hello", "PRIORITY", "6"));
 * }</pre>
 */
public final class Journal {
  interface LibJournal extends Library {
    int sd_journal_sendv(Memory iov, int n);
  }

  private static final class Holder {
    static final Journal INSTANCE = create();
  }

  private final LibJournal lib;
  private final String unavailable;

  private Journal(LibJournal lib, String unavailable) {
    this.lib = lib;
    this.unavailable = unavailable;
  }

  private static Journal create() {
    String[] why = new String[1];
    LibJournal lib = LibSystemd.load(LibJournal.class, why);
    return new Journal(lib, why[0]);
  }

  public static Journal load() {
    return Holder.INSTANCE;
  }

  /** Whether libsystemd was found; journald itself may still be down (see {@link #send}). */
  public boolean available() {
    return lib != null;
  }

  /** Why libsystemd is not available, or null. */
  public String unavailableReason() {
    return unavailable;
  }

  /**
   * Sends one entry whose fields are {@code NAME=value} pairs (names upper case, as journald
   * requires). Throws when journald did not take it (not running, socket gone).
   */
  public void send(List<Map.Entry<String, String>> fields) throws IOException {
    if (lib == null) {
      throw new IOException(unavailable);
    }
    int n = fields.size();
    // struct iovec { void *iov_base; size_t iov_len; }: 16 bytes on the 64-bit platforms we run on.
    Memory iov = new Memory(16L * n);
    Memory[] keep = new Memory[n];
    for (int i = 0; i < n; i++) {
      byte[] bytes = (fields.get(i).getKey() + "=" + fields.get(i).getValue()).getBytes(StandardCharsets.UTF_8);
      keep[i] = new Memory(Math.max(1, bytes.length));
      keep[i].write(0, bytes, 0, bytes.length);
      iov.setPointer(16L * i, keep[i]);
      iov.setLong(16L * i + 8, bytes.length);
    }
    int rc = lib.sd_journal_sendv(iov, n);
    if (rc < 0) {
      throw new ErrnoException("sd_journal_sendv: " + Errno.describe(-rc), -rc);
    }
  }
}
