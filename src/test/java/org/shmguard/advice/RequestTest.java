package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.policy.JobShape;

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
  void scanIsRootsThoughItChangesNothing() throws Exception {
    assertThat(Request.Verb.SCAN.changesHost()).isFalse();
    assertThat(Request.Verb.SCAN.rootOnly()).isTrue();
    assertThat(Request.Verb.REMOUNT.rootOnly()).isTrue();
    assertThat(Request.Verb.CHECK.rootOnly()).isFalse();
    assertThat(Request.Verb.ADVISE.rootOnly()).isFalse();
    assertThat(Request.parse("SCAN v1 format=json").args()).isEqualTo(Map.of("format", "json"));
    assertThatThrownBy(() -> Request.parse("SCAN v1 dev=0:25")).hasMessageContaining("SCAN takes no \"dev\"; it takes format");
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

  @Test
  void adviseTakesTheJobsShapeAsOptionalKeys() throws Exception {
    JobShape shape = AdviseRequest.shape(Request.parse("ADVISE v1 ranks=8 nccl=2.26.3 nodes=1 p2p=no procs=2 numa=yes"));

    assertThat(shape).isEqualTo(new JobShape(8, org.shmguard.gpu.NcclVersion.of(2, 26, 3), 1, false, 2, true));
    assertThat(AdviseRequest.shape(Request.parse("ADVISE v1 ranks=4"))).isEqualTo(new JobShape(4, null));
  }

  @Test
  void badShapeKeysSayWhatIsAllowed() {
    assertThatThrownBy(() -> AdviseRequest.shape(Request.parse("ADVISE v1 p2p=maybe")))
        .hasMessageContaining("p2p must be yes or no, not \"maybe\"");
    assertThatThrownBy(() -> AdviseRequest.shape(Request.parse("ADVISE v1 nodes=0")))
        .hasMessageContaining("nodes must be a whole number from 1");
    assertThatThrownBy(() -> AdviseRequest.shape(Request.parse("ADVISE v1 ranks=2 procs=3")))
        .hasMessageContaining("processes (3) cannot outnumber local ranks (2)");
  }
}
