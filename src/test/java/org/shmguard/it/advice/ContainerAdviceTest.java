package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/** A client inside a container's mount namespace gets advice about the container's /dev/shm, not the host's. */
class ContainerAdviceTest {
  @Test
  void adviseInsideAContainerIsAboutTheContainersShm() throws IOException {
    try (Holder c = Holder.startInContainer("size=32m,mode=1777", "create-map:4096", "/dev/shm/nccl-Ctr001")) {
      Path cfg = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n");
      Judgement j = Engine.create(TestConfig.load(cfg), HostPaths.system()).judge();
      Path socket = Files.createDirectories(Sandbox.MOUNTS).resolve("container-advice.sock");
      AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
          HostActions.none());
      try (AdviceServer server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start()) {
        String inside = Cmd.run("nsenter", "-t", Integer.toString(c.pid()), "-m", "--", Sandbox.javaBinary(),
            "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main",
            "advise", "--daemon-only", "--socket", socket.toString(), "--local-ranks", "2", "--nccl-version", "2.21.5");
        String outside = Cmd.run(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
            "org.shmguard.cli.Main", "advise", "--daemon-only", "--socket", socket.toString(), "--local-ranks", "2",
            "--nccl-version", "2.21.5");

        String containerDev = Cmd.run("nsenter", "-t", Integer.toString(c.pid()), "-m", "--", "mountpoint", "-d", "/dev/shm").trim();
        String sandboxDev = Cmd.run("mountpoint", "-d", "/dev/shm").trim();
        assertThat(containerDev).isNotEqualTo(sandboxDev);
        assertThat(inside).contains("SHMGUARD_DEV=" + containerDev, "SHMGUARD_SIZE_BYTES=33554432");
        assertThat(outside).contains("SHMGUARD_DEV=" + sandboxDev, "SHMGUARD_SIZE_BYTES=67108864");
      }
    }
  }
}
