package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviceService;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Action;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/** The advice service as one of the daemon's outputs: it advises from the judgement a pass's plan says to, and nothing else. */
class AdviceServiceTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  @Test
  void onlyAPlansAdviseChangesTheAnswersAndTheAdviceFileAndEachAnswerIsCounted() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "advice-service-");
    Path socket = dir.resolve("advice.sock");
    Path envFile = dir.resolve("advice.env");
    Config config = TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n"
        + "advice:\n  socket: " + socket + "\n  envFile: " + envFile + "\n"));
    Judgement j = Engine.create(config, HostPaths.system()).judge();
    List<String> answered = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (AdviceService advice = AdviceService.start(config, HostPaths.system(), HostActions.none(),
        (action, mount) -> answered.add(action + " " + mount.path()))) {
      advice.export(PassReport.of(Alert.of(EventKind.SUMMARY, "summary: /dev/shm is 0% full (ok)")));
      advice.export(new PassReport(j, new Plan(List.of(), null), List.of(), List.of(), List.of(), false, Duration.ZERO));

      assertThatThrownBy(() -> AdviceClient.ask(socket, "ADVISE v1", PATIENCE)).isInstanceOf(ProtocolException.class)
          .hasMessageContaining("has not finished its first pass");
      assertThat(envFile).doesNotExist();

      advice.export(new PassReport(j, new Plan(List.of(new Action.Advise(j)), null), List.of(), List.of(), List.of(), false,
          Duration.ZERO));

      assertThat(AdviceClient.ask(socket, "ADVISE v1", PATIENCE)).contains("SHMGUARD_MOUNT=/dev/shm");
      // the refused ask is no answer; the one answer is told to the metrics' listener, with its mount
      assertThat(answered).singleElement().asString().endsWith(" /dev/shm");
      Eventually.until("the advice file", PATIENCE, () -> Files.exists(envFile));
      assertThat(Files.readString(envFile)).contains("SHMGUARD_ADVICE=", "SHMGUARD_MOUNT=/dev/shm");
    } finally {
      Files.deleteIfExists(envFile);
      Files.deleteIfExists(dir);
    }
  }
}
