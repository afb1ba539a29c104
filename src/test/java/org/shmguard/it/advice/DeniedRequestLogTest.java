package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.SocketClient;
import org.slf4j.LoggerFactory;

/**
 * An ordinary user who asks CLEAN (root's only) in a loop gets "ERR v1 denied" every time, but
 * the journal gets at most one line per 10 s with a count, as for refused connections: otherwise
 * any user could fill the journal, and past journald's rate limit for the unit, push shmguard's
 * own alerts out of it.
 */
class DeniedRequestLogTest {
  private static SocketClient client;

  @BeforeAll
  static void build() throws IOException {
    Sandbox.require();
    client = SocketClient.build();
  }

  @AfterAll
  static void remove() throws IOException {
    if (client != null) {
      client.delete();
    }
  }

  @Test
  void aUserAskingCleanInALoopIsDeniedEachTimeAndLoggedOnce() throws Exception {
    Path socket = Sandbox.MOUNTS.resolve("advice-denied-" + ProcessHandle.current().pid() + ".sock");
    AdviceResponder responder = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());
    Logger log = (Logger) LoggerFactory.getLogger(AdviceServer.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    log.addAppender(lines);
    try (AdviceServer server = AdviceServer.bind(socket, responder,
        new AdviceServer.Limits(1024, Duration.ofSeconds(2), Duration.ofSeconds(5), 32, 4, 8)).start()) {
      for (int i = 0; i < 40; i++) {
        assertThat(client.ask(65534, socket, "CLEAN v1 dry-run=true")).startsWith("ERR v1 denied");
      }
    } finally {
      log.detachAppender(lines);
    }
    assertThat(lines.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("refused")))
        .as("lines about refused requests").hasSizeLessThanOrEqualTo(2);
  }
}
