package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RequestTest {
  @Test
  void parsesVerbVersionAndArguments() throws Exception {
    Request r = Request.parse("ADVISE v1 ranks=4 nccl=2.21.5 dev=0:25 format=json");

    assertThat(r.verb()).isEqualTo(Request.Verb.ADVISE);
    assertThat(r.args()).isEqualTo(Map.of("ranks", "4", "nccl", "2.21.5", "dev", "0:25", "format", "json"));
  }

  @Test
  void onlyRemountAndCleanChangeTheHost() {
    assertThat(Request.Verb.REMOUNT.changesHost()).isTrue();
    assertThat(Request.Verb.CLEAN.changesHost()).isTrue();
    assertThat(Request.Verb.ADVISE.changesHost()).isFalse();
    assertThat(Request.Verb.PING.changesHost()).isFalse();
    assertThat(Request.Verb.CHECK.changesHost()).isFalse();
  }

  @Test
  void checkTakesTheVersionAndNoKeys() throws Exception {
    assertThat(Request.parse("CHECK v1").verb()).isEqualTo(Request.Verb.CHECK);
    assertThatThrownBy(() -> Request.parse("CHECK")).hasMessageContaining("CHECK v1");
    assertThatThrownBy(() -> Request.parse("CHECK v1 dev=0:25")).hasMessageContaining("CHECK takes no \"dev\"");
  }

  @Test
  void badRequestsSayWhatIsWrong() {
    assertThatThrownBy(() -> Request.parse("")).hasMessageContaining("empty request");
    assertThatThrownBy(() -> Request.parse("ADVISE v2")).hasMessageContaining("ADVISE v1");
    assertThatThrownBy(() -> Request.parse("ADVISE v1 ranks=1 ranks=2")).hasMessageContaining("given twice");
    assertThatThrownBy(() -> Request.parse("REMOUNT v1 ranks=2")).hasMessageContaining("REMOUNT takes no \"ranks\"; it takes dev, size");
    assertThatThrownBy(() -> Request.parse("ADVISE v1 =x")).hasMessageContaining("is not key=value");
  }

  @Test
  void envFormatKeepsEveryValueOnOneLine() {
    assertThat(AdviceFormat.printable("a\nb\u0000c")).isEqualTo("a?b?c");
    assertThat(AdviceFormat.snake("growBytesUnchanged")).isEqualTo("GROW_BYTES_UNCHANGED");
  }
}
