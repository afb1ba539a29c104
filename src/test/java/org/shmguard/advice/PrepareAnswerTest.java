package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.shmguard.model.ContainerStart;
import org.shmguard.gpu.HostGpus;

/** Root's PREPARE request read into a starting container, and every way a request can be wrong. */
class PrepareAnswerTest {
  private static final String ID = "c0ffee0000000000000000000000000000000000000000000000000000000003";

  private static ContainerStart start(String line, int hostGpus) throws ProtocolException {
    return PrepareAnswer.start(Request.parse(line), new HostGpus(null, hostGpus));
  }

  @Test
  void readsTheContainerItsPidItsGpusAndItsRoot() throws Exception {
    assertThat(start("PREPARE v1 container=" + ID + " pid=4242 gpus=4 root=/var/lib/containers/merged", 0))
        .isEqualTo(new ContainerStart(ID, 4242, 4, "/var/lib/containers/merged"));
    assertThat(start("PREPARE v1 container=" + ID + " pid=4242 gpus=all", 8).gpus()).as("the host's GPUs").isEqualTo(8);
    assertThat(start("PREPARE v1 container=" + ID + " pid=4242 gpus=all", 0).gpus()).as("an 8-GPU server when unknown").isEqualTo(8);
    assertThat(start("PREPARE v1 container=" + ID + " pid=4242 gpus=999999999999", 0).gpus()).isEqualTo(1_000_000);
    assertThat(Request.Verb.PREPARE.changesHost()).isTrue();
  }

  @Test
  void aWrongRequestIsABadRequestSayingWhat() {
    assertThatThrownBy(() -> start("PREPARE v1 pid=4242 gpus=4", 0)).hasMessage(
        "PREPARE needs container=; send PREPARE v1 container=ID pid=PID gpus=N|all [root=PATH]");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=-1 gpus=4", 0)).hasMessage("pid must be a process id, not \"-1\"");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=1 gpus=4", 0)).hasMessage("pid must be a process id above 1, not 1");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=42 gpus=0", 0)).hasMessage("gpus must be at least 1, not 0");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=42 gpus=four", 0)).hasMessage("gpus must be a whole number or all, not \"four\"");
    assertThatThrownBy(() -> start("PREPARE v1 container=../etc pid=42 gpus=4", 0)).hasMessageStartingWith("container must be a runtime's container id");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=42 gpus=4 root=merged", 0)).hasMessage("root must be an absolute path without '..'");
    assertThatThrownBy(() -> start("PREPARE v1 container=" + ID + " pid=42 gpus=4 root=/a/../b", 0)).hasMessage("root must be an absolute path without '..'");
    assertThatThrownBy(() -> Request.parse("PREPARE v1 container=" + ID + " dev=0:42")).hasMessageContaining("PREPARE takes no \"dev\"");
  }
}
