package org.shmguard.systemd;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.pattern.DynamicConverter;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * The start of each log line ({@link LogConfigurator}'s {@code %lineStart}): when standard error is connected to
 * journald's stream (systemd sets JOURNAL_STREAM to its device and inode), a syslog priority
 * prefix such as {@code <4>} that journald turns into the entry's PRIORITY, and nothing else, as
 * journald adds its own timestamps; on a terminal or file, the time and level.
 */
public final class JournalStreamConverter extends DynamicConverter<ILoggingEvent> {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
      .withZone(ZoneId.systemDefault());
  private static final boolean JOURNAL = stderrIsJournal(System.getenv("JOURNAL_STREAM"));

  @Override
  public String convert(ILoggingEvent e) {
    if (JOURNAL) {
      return "<" + priority(e.getLevel()) + ">";
    }
    return TIME.format(Instant.ofEpochMilli(e.getTimeStamp())) + " " + String.format("%-5s ", e.getLevel());
  }

  /** Whether stderr is the stream JOURNAL_STREAM names ("DEV:INODE"), as sd_journal_stream_fd(3) says to check. */
  public static boolean stderrIsJournal(String journalStream) {
    if (journalStream == null || !journalStream.contains(":")) {
      return false;
    }
    try {
      String[] f = journalStream.split(":");
      StatxResult st = Linux.get().stat("/proc/self/fd/2");
      long dev = ((long) st.devMinor() & 0xff) | (((long) st.devMajor() & 0xfff) << 8)
          | (((long) st.devMinor() & ~0xffL) << 12) | (((long) st.devMajor() & ~0xfffL) << 32);
      return Long.parseUnsignedLong(f[0]) == dev && Long.parseUnsignedLong(f[1]) == st.ino();
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  static int priority(Level level) {
    return switch (level.toInt()) {
      case Level.ERROR_INT -> 3;
      case Level.WARN_INT -> 4;
      case Level.INFO_INT -> 6;
      default -> 7;
    };
  }
}
