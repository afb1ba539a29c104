package org.shmguard.it.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Linux;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * `shmguard clean`, as an operator runs it, against an ordinary user (uid 65534, in a user and
 * mount namespace of its own) who bind-mounts another user's leaked segment to force shmguard to
 * undo its reap and races to create the freed name. The victim's name keeps the victim's file.
 */
class PutBackCleanTest {
  private static final String NAME = "nccl-Victim";
  private static final String DATA = "the victim's data";
  private TmpfsMount shm;
  private Path config;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create("size=4m,mode=1777");
    config = TestConfig.watching(shm.path(), "0s");
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  @Test
  void cleanNeverLetsAUserWhoBindMountsAnotherUsersLeakTakeItsName() throws Exception {
    long victim = victimFile();
    Path taker = CProgram.build("putback/name-taker.c");
    Process attacker = attacker(shm.path().toString(), NAME, taker.toString());
    List<String> took;
    try {
      for (int round = 0; round < 10; round++) {
        JsonNode action = CliRun.actionFor(CliRun.of("clean", "--json", "-c", config.toString()).json(), NAME);

        assertThat(action.get("result").asText()).as("round %d: %s", round, action).isEqualTo("skipped");
        assertThat(action.get("detail").asText()).contains("mounted elsewhere");
        assertThat(Linux.get().stat(shm.file(NAME).toString()).ino()).as("round %d: the victim's inode", round)
            .isEqualTo(victim);
        assertThat(Files.readString(shm.file(NAME))).isEqualTo(DATA);
      }
    } finally {
      attacker.toHandle().destroyForcibly();
      attacker.waitFor(30, TimeUnit.SECONDS);
    }
    try (BufferedReader r = new BufferedReader(new InputStreamReader(attacker.getInputStream(), StandardCharsets.UTF_8))) {
      took = r.lines().filter(l -> l.startsWith("took ")).toList();
    }
    assertThat(took).as("files the attacker created under the victim's name").isEmpty();
    // The attacker's namespace, and its bind, ended with it: now the leak goes.
    assertThat(CliRun.of("clean", "-c", config.toString()).status()).isZero();
    assertThat(shm.file(NAME)).doesNotExist();
  }

  /** What shmguard killed before its unlink leaves: the victim's file under its hidden name, its name taken by another user. */
  @Test
  void cleanKeepsAFileLeftUnderItsHiddenNameWhileAnotherUserHoldsItsName() throws Exception {
    victimFile();
    Path stranded = shm.file(".shmguard-reap-00112233aabbccdd-" + NAME);
    Files.move(shm.file(NAME), stranded);
    Cmd.run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c",
        "set -C; printf ATTACKER > \"$1\"", "sh", shm.file(NAME).toString());

    JsonNode clean = CliRun.of("clean", "--json", "-c", config.toString()).json();
    JsonNode action = CliRun.actionFor(clean, stranded.getFileName().toString());

    assertThat(action.get("result").asText()).isEqualTo("skipped");
    assertThat(action.get("detail").asText()).contains("its own name " + NAME).contains("uid 65534");
    assertThat(Files.readString(stranded)).isEqualTo(DATA);
    // The attacker's own file, unheld under an nccl- name, is a leak of its own, judged as such.
    assertThat(CliRun.actionFor(clean, NAME).get("result").asText()).isEqualTo("reaped");
  }

  private long victimFile() throws IOException {
    Path p = shm.file(NAME);
    Files.writeString(p, DATA);
    Cmd.run("chown", "1000:1000", p.toString());
    Cmd.run("chmod", "0600", p.toString());
    return Linux.get().stat(p.toString()).ino();
  }

  /** uid 65534 in its own user and mount namespace: binds the victim's file, then loops O_CREAT|O_EXCL on its name. */
  private static Process attacker(String... args) {
    Sandbox.require();
    List<String> cmd = new ArrayList<>(List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
        "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", "/bin/sh", "-ec", """
            : > "$1/.atk-target"
            mount --bind "$1/$2" "$1/.atk-target"
            exec "$3" take "$1" "$2" ATTACKER
            """, "sh"));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String line = new String(p.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
      if (!line.equals("ready\n")) {
        p.toHandle().destroyForcibly();
        throw new AssertionError("the attacker did not start: " + line);
      }
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
