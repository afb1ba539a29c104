package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviseRequest;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.Peer;
import org.shmguard.advice.ProtocolException;
import org.shmguard.advice.Request;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The protocol's meaning, without a socket: who may ask what, and what each verb is answered with. */
class AdviceResponderTest {
  private static final Peer ROOT = new Peer("root", true);
  private static final Peer NOBODY = new Peer("nobody", false);

  private static HostActions cleaning(List<String> asked) {
    return new HostActions() {
      @Override
      public String remount(ShmMount mount, Long sizeBytes) {
        asked.add("remount " + mount.dev() + " " + sizeBytes);
        return "grew it";
      }

      @Override
      public String clean(boolean dryRun) {
        asked.add("clean " + dryRun);
        return "would reap 0 of 0 candidates; 0 blockers";
      }
    };
  }

  @Test
  void onlyRootMayAskToChangeTheHostAndItsRequestGoesToTheHostActions() throws Exception {
    List<String> asked = new ArrayList<>();
    AdviceResponder responder = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8), cleaning(asked));

    assertThatThrownBy(() -> responder.respond(Request.parse("CLEAN v1 dry-run=true"), NOBODY))
        .isInstanceOf(ProtocolException.class).hasMessageContaining("only root may ask it; nobody may ask ADVISE, CHECK and PING");
    assertThat(asked).isEmpty();

    assertThat(responder.respond(Request.parse("CLEAN v1 dry-run=true"), ROOT))
        .isEqualTo("OK v1\nwould reap 0 of 0 candidates; 0 blockers\n");
    assertThat(asked).containsExactly("clean true");
  }

  @Test
  void adviceIsAboutTheNamedMountAndEveryAnswerIsToldToTheListener() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777")) {
      Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "2m")), HostPaths.system()).judge();
      AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8), HostActions.none());
      List<String> answered = new ArrayList<>();
      responder.reportAnswersTo((advice, mount) -> answered.add(advice + " " + mount.dev()));

      String reply = responder.respond(Request.parse("ADVISE v1 ranks=2 dev=" + shm.dev()), NOBODY);

      assertThat(reply).startsWith("OK v1\n").contains("SHMGUARD_MOUNT=" + shm.path(), "SHMGUARD_DEV=" + shm.dev());
      assertThat(answered).singleElement().asString().endsWith(" " + shm.dev());
      assertThatThrownBy(() -> responder.respond(Request.parse("ADVISE v1 dev=0:1"), NOBODY))
          .isInstanceOf(ProtocolException.class).hasMessageContaining("is not a shm tmpfs shmguard watches");
      assertThat(responder.advise(new AdviseRequest(org.shmguard.policy.JobShape.unknown(), shm.dev(), "env")))
          .contains("SHMGUARD_MOUNT=" + shm.path());
    }
  }

  @Test
  void anAdviseWithoutDevIsAboutTheAskersOwnDevShmAndNeverAnothers() throws Exception {
    Sandbox.require();
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n")),
        HostPaths.system()).judge();
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8), HostActions.none());
    String link = Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")).toString(); // mnt:[INODE]
    long ownNamespace = Long.parseLong(link.substring(5, link.length() - 1));
    String shmDev = Cmd.run("mountpoint", "-d", "/dev/shm").strip();

    assertThat(responder.respond(Request.parse("ADVISE v1 ranks=2"), new Peer("uid 1000", false, 4242, null, ownNamespace)))
        .as("a client in shmguard's own mount namespace").contains("SHMGUARD_DEV=" + shmDev + "\n");
    assertThatThrownBy(() -> responder.respond(Request.parse("ADVISE v1 ranks=2"), new Peer("uid 1000", false, 0, null, -1)))
        .isInstanceOf(ProtocolException.class).hasMessageContaining("cannot tell which /dev/shm this client sees")
        .hasMessageContaining("send dev=MAJ:MIN");
    assertThatThrownBy(() -> responder.respond(Request.parse("ADVISE v1 ranks=2"), new Peer("uid 1000", false, 4242, null, 1)))
        .as("a namespace the pass did not read is not answered with the host's /dev/shm")
        .isInstanceOf(ProtocolException.class).hasMessageContaining("watched no /dev/shm of this client's mount namespace, mnt:[1]");
  }
}
