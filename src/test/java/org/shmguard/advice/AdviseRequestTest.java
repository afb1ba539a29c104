package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.JobShape;
import org.shmguard.policy.MountSpace;
import org.shmguard.gpu.NcclVersion;

/** The ADVISE grammar in one place: what the command writes, the daemon reads back unchanged. */
class AdviseRequestTest {
  private static final JobShape SHAPE = new JobShape(8, NcclVersion.parse("2.26.3"), 2, false, 4, true);

  @Test
  void whatTheCommandWritesTheDaemonReadsBack() throws Exception {
    AdviseRequest q = new AdviseRequest(SHAPE, Dev.of(0, 25), "json");

    String line = q.line(true);

    assertThat(line).isEqualTo("ADVISE v1 ranks=8 nccl=2.26.3 dev=0:25 nodes=2 p2p=no procs=4 numa=yes format=json");
    AdviseRequest back = AdviseRequest.of(Request.parse(line));
    assertThat(back.shape()).isEqualTo(SHAPE);
    assertThat(back.format()).isEqualTo("json");
  }

  @Test
  void aLineForAnOlderDaemonHasOnlyTheFirstKeys() {
    assertThat(new AdviseRequest(SHAPE, null, "env").line(false)).isEqualTo("ADVISE v1 ranks=8 nccl=2.26.3 format=env");
    assertThat(AdviseRequest.HOST_DEFAULT.line(true)).isEqualTo("ADVISE v1 format=env");
  }

  @Test
  void aFormatOtherThanEnvOrJsonIsRefusedEitherWay() {
    assertThatThrownBy(() -> new AdviseRequest(SHAPE, null, "yaml")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("format must be env or json");
    assertThatThrownBy(() -> AdviseRequest.of(Request.parse("ADVISE v1 format=yaml"))).isInstanceOf(ProtocolException.class)
        .hasMessageContaining("format must be env or json, not \"yaml\"");
  }

  @Test
  void theAnswerIsTheEnginesAdviceInTheRequestsFormat() {
    MountSpace roomy = new MountSpace("/dev/shm", "0:25", 64L << 30, 60L << 30, 0);

    AdviseRequest.Answer env = new AdviseRequest(JobShape.unknown(), null, "env").answer(new AdviceEngine(8), roomy,
        HostGpus.unknown());
    AdviseRequest.Answer json = new AdviseRequest(JobShape.unknown(), null, "json").answer(new AdviceEngine(8), roomy,
        HostGpus.unknown());

    assertThat(env.text()).isEqualTo(AdviceFormat.env(env.advice()));
    assertThat(json.text()).isEqualTo(AdviceFormat.json(json.advice()));
    assertThat(json.advice()).isEqualTo(env.advice());
  }
}
