package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.testing.Sandbox;

/** The server over a real Unix socket: it answers, refuses what is malformed, and leaves no file behind. */
class AdviceServerTest {
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  @Test
  void itAnswersPingAndAMalformedRequestWithItsErrorThenRemovesItsSocketOnClose() throws Exception {
    Sandbox.require();
    Path socket = Sandbox.MOUNTS.resolve("server-" + ProcessHandle.current().pid() + ".sock");
    AdviceResponder responder = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8), HostActions.none());
    AdviceServer server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(2), 4)).start();
    try {
      assertThat(AdviceClient.ask(socket, "PING v1", PATIENCE)).isEqualTo("pong\n");
      assertThatThrownBy(() -> AdviceClient.ask(socket, "ADVISE v1 ranks=many", PATIENCE))
          .isInstanceOf(ProtocolException.class)
          .satisfies(e -> assertThat(((ProtocolException) e).code()).isEqualTo(ProtocolException.BAD_REQUEST));
      assertThatThrownBy(() -> AdviceClient.ask(socket, "ADVISE v1", PATIENCE)).isInstanceOf(ProtocolException.class)
          .hasMessageContaining("has not finished its first pass");
    } finally {
      server.close();
    }
    assertThat(socket).doesNotExist();
  }
}
