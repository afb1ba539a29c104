package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclFootprint;
import org.shmguard.gpu.NcclJob;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.text.Durations;
import org.shmguard.text.Glob;

class GlobAndKindTest {

  @Test
  void globsMatchWholeNamesWithStarQuestionAndClasses() {
    assertThat(Glob.of("nccl-*").matches("nccl-AbC123")).isTrue();
    assertThat(Glob.of("nccl-*").matches("xnccl-AbC123")).isFalse();
    assertThat(Glob.of("nccl-??????").matches("nccl-AbC123")).isTrue();
    assertThat(Glob.of("nccl-??????").matches("nccl-AbC1234")).isFalse();
    assertThat(Glob.of("psm_[0-9a-f]*").matches("psm_1a2b")).isTrue();
    assertThat(Glob.of("psm_[!0-9]*").matches("psm_1a2b")).isFalse();
    assertThat(Glob.of("cuda.shm.*").matches("cudaXshmX0")).isFalse();
    assertThat(Glob.of("a[.]b").matches("a.b")).isTrue();
    assertThat(Glob.of("nccl-*").matches("nccl-new\nline")).isTrue();
  }

  @Test
  void starPatternsMatchAsTheShellDoesWherePiecesCouldOverlap() {
    assertThat(Glob.of("nccl-*").matches("nccl-")).isTrue();
    assertThat(Glob.of("nccl-*").matches("nccl")).isFalse();
    assertThat(Glob.of("ab*ba").matches("aba")).as("prefix and suffix may not share a character").isFalse();
    assertThat(Glob.of("ab*ba").matches("abba")).isTrue();
    assertThat(Glob.of("a*b*c").matches("aXbYc")).isTrue();
    assertThat(Glob.of("a*b*c").matches("acb")).isFalse();
    assertThat(Glob.of("a*bc*bc").matches("abcbc")).isTrue();
    assertThat(Glob.of("a*bc*bc").matches("abc")).isFalse();
    assertThat(Glob.of("x**y").matches("xy")).isTrue();
    assertThat(Glob.of("*").matches("")).isTrue();
    assertThat(Glob.of("torch_*.x").matches("torch_\uD83D\uDE00.x")).isTrue();
    assertThat(Glob.of("torch_?.x").matches("torch_\uD83D\uDE00.x")).as("? is one character, not one UTF-16 unit").isTrue();
    assertThat(Glob.of("sem.mp-x").matches("sem.mp-x")).isTrue();
    assertThat(Glob.of("sem.mp-x").matches("semXmp-x")).as("a dot is a dot").isFalse();
  }

  @Test
  void theLiteralPrefixIsWhatEveryMatchingNameBeginsWith() {
    assertThat(Glob.of("nccl-*").literalPrefix()).isEqualTo("nccl-");
    assertThat(Glob.of("psm_[0-9]*").literalPrefix()).isEqualTo("psm_");
    assertThat(Glob.of("ab?d").literalPrefix()).isEqualTo("ab");
    assertThat(Glob.of("*nccl").literalPrefix()).isEmpty();
    assertThat(Glob.of("sem.mp-x").literalPrefix()).isEqualTo("sem.mp-x");
  }

  @Test
  void badGlobsAreRefusedWithAReason() {
    assertThatThrownBy(() -> Glob.of("")).hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> Glob.of("x/y")).hasMessageContaining("'/'");
    assertThatThrownBy(() -> Glob.of("nccl-[ab")).hasMessageContaining("unclosed '['");
  }

  @Test
  void kindsFollowNcclSizes() {
    assertThat(SegmentKind.guess("nccl-AbC123", 9_637_892)).isEqualTo("nccl-shm-recv");
    assertThat(SegmentKind.guess("nccl-AbC123", 4_100)).isEqualTo("nccl-shm-send");
    assertThat(SegmentKind.guess("nccl-AbC123", 7_340_388)).isEqualTo("nccl-proxy-pool (2.21-2.22)");
    assertThat(SegmentKind.guess("nccl-AbC123", 4_194_660)).isEqualTo("nccl-proxy-pool (2.12-2.19)");
    assertThat(SegmentKind.guess("nccl-AbC123", 0)).isEqualTo("nccl-empty");
    assertThat(SegmentKind.guess("nccl-AbC123", 12345)).isEqualTo("nccl");
    assertThat(SegmentKind.guess("nccl-shm-recv-1a2b-0-1-2", 9_637_888)).isEqualTo("nccl-shm-recv (<2.12)");
    assertThat(SegmentKind.guess("cuda.shm.0.1", 1)).isEqualTo("cuda-mps");
    assertThat(SegmentKind.guess("vader_segment.x", 1)).isEqualTo("open-mpi");
  }

  @Test
  void ncclFactsAddUpToTheReportedSizes() {
    assertThat(NcclFacts.SHM_RECV_BYTES).isEqualTo(9_637_888);
    assertThat(NcclFacts.shmRecvBytes(524_288, 4_915_200, 4_194_304)).isEqualTo(9_637_888);
    // "4 local ranks on a 2-channel ring already need about 77 MB" (NCCL-FACTS.md)
    assertThat(NcclFootprint.of(NcclJob.singleNode(4, NcclVersion.parse("2.21.5"))).shmBuffersBytes()).isBetween(77_000_000L, 77_200_000L);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.parse("2.11.4"))).isZero();
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.parse("2.21.5"))).isEqualTo(7_340_384);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.parse("v2.28.3-1"))).isEqualTo(34_210_176);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.parse("2.31"))).isEqualTo(34_210_176);
  }

  @Test
  void durationsReadLikeAPersonWouldWriteThem() {
    assertThat(Durations.human(java.time.Duration.ofMillis(850))).isEqualTo("850ms");
    assertThat(Durations.human(java.time.Duration.ofSeconds(190))).isEqualTo("3m10s");
    assertThat(Durations.human(java.time.Duration.ofMinutes(125))).isEqualTo("2h5m");
    assertThat(Durations.human(java.time.Duration.ofHours(76))).isEqualTo("3d4h");
  }
}
