package org.shmguard.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Log lines take journald's priority prefix only when stderr really is the stream JOURNAL_STREAM names. */
class JournalStreamConverterTest {

  @Test
  void stderrMatchingJournalStreamIsRecognised() throws Exception {
    Path stderr = Path.of("/proc/self/fd/2");
    long dev = (Long) Files.getAttribute(stderr, "unix:dev");
    long ino = (Long) Files.getAttribute(stderr, "unix:ino");

    assertThat(JournalStreamConverter.stderrIsJournal(Long.toUnsignedString(dev) + ":" + ino)).isTrue();
  }

  @Test
  void inheritedOrMissingJournalStreamIsIgnored() throws Exception {
    long ino = (Long) Files.getAttribute(Path.of("/proc/self/fd/2"), "unix:ino", LinkOption.NOFOLLOW_LINKS);
    assertThat(JournalStreamConverter.stderrIsJournal(null)).isFalse();
    assertThat(JournalStreamConverter.stderrIsJournal("garbage")).isFalse();
    // A child that inherited JOURNAL_STREAM but writes stderr elsewhere: another inode.
    assertThat(JournalStreamConverter.stderrIsJournal("0:" + (ino + 1_000_003))).isFalse();
  }

  @Test
  void levelsMapToSyslogPriorities() {
    assertThat(JournalStreamConverter.priority(ch.qos.logback.classic.Level.ERROR)).isEqualTo(3);
    assertThat(JournalStreamConverter.priority(ch.qos.logback.classic.Level.WARN)).isEqualTo(4);
    assertThat(JournalStreamConverter.priority(ch.qos.logback.classic.Level.INFO)).isEqualTo(6);
    assertThat(JournalStreamConverter.priority(ch.qos.logback.classic.Level.DEBUG)).isEqualTo(7);
  }
}
