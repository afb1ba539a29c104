package org.shmguard.it.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Python's own multiprocessing.shared_memory, with its resource tracker, in the sandbox's
 * /dev/shm (a fresh tmpfs over it for each test): the segment is judged right while its owner
 * lives, after the owner alone is SIGKILLed (the tracker cleans up), after owner and tracker are
 * SIGKILLed together (the leak: reported, reaped only when configured), and after a clean exit
 * (gone) or a hand-on exit (meant to live on: not reaped, and a consumer still attaches).
 */
class PythonSharedMemoryClientTest {
  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static final Path DEV_SHM = Path.of("/dev/shm");
  private final List<Process> started = new ArrayList<>();
  private final List<Long> killLater = new ArrayList<>();
  private TmpfsMount shm;
  private Path script;

  @BeforeEach
  void freshDevShm() throws IOException {
    assumeThat(Files.isExecutable(PYTHON)).as("needs python3 (" + PYTHON + ")").isTrue();
    shm = TmpfsMount.createAt(DEV_SHM, "size=16m,mode=1777");
    script = Files.createTempFile(Sandbox.MOUNTS, "psm_owner", ".py");
    try (InputStream in = getClass().getResourceAsStream("/families/psm_owner.py")) {
      Files.write(script, in.readAllBytes());
    }
  }

  @AfterEach
  void stopEverything() throws Exception {
    for (long pid : killLater) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    for (Process p : started) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    if (shm != null) {
      shm.close();
    }
    Files.deleteIfExists(script);
  }

  private Engine engine(String families) {
    return Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n"
        + families)), HostPaths.system());
  }

  /** An owner: its first line split in words, and the process (stdin open: it holds). */
  private record Owner(Process process, String[] said) {
    String segment() {
      return said[0];
    }

    long pid() {
      return Long.parseLong(said[1]);
    }

    long tracker() {
      return Long.parseLong(said[2]);
    }
  }

  private Owner start(String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(PYTHON.toString(), script.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    started.add(p);
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).as("the python owner's first line").isNotNull();
    Owner o = new Owner(p, line.trim().split(" "));
    if (o.said.length > 2) {
      killLater.add(o.tracker());
    }
    return o;
  }

  private static Assessment of(Judgement j, String name) {
    return j.segments().stream().filter(a -> a.segment().displayName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError(name + " not judged: " + j.segments()));
  }

  private static boolean exists(String name) {
    return Files.exists(DEV_SHM.resolve(name));
  }

  private static void killAndWait(long... pids) {
    List<ProcessHandle> handles = new ArrayList<>();
    for (long pid : pids) {
      ProcessHandle.of(pid).ifPresent(h -> {
        h.destroyForcibly();
        handles.add(h);
      });
    }
    Eventually.until("the killed processes to be gone", Duration.ofSeconds(20), () -> handles.stream().noneMatch(ProcessHandle::isAlive));
  }

  @Test
  void heldWhileItsOwnerLivesAndCleanedByTheTrackerWhenOnlyTheOwnerIsKilled() throws Exception {
    Engine engine = engine("");
    Owner owner = start("hold");
    assertThat(owner.segment()).matches("psm_[0-9a-f]{8}");
    Assessment held = of(engine.judge(), owner.segment());
    assertThat(held.verdict()).isEqualTo(Verdict.HELD);
    assertThat(held.family()).isEqualTo("pythonShm");
    assertThat(held.reason()).contains("pid " + owner.pid());

    killAndWait(owner.pid());
    // The tracker reads end-of-file on its pipe and unlinks what is still registered: Python's own safety net.
    Eventually.until("the resource tracker to unlink " + owner.segment(), Duration.ofSeconds(30), () -> !exists(owner.segment()));
    PassReport pass = engine.clean(false);
    assertThat(pass.judgement().segments()).noneMatch(a -> a.segment().displayName().equals(owner.segment()));
  }

  @Test
  void ownerAndTrackerKilledTogetherLeaveALeakThatIsReportedAndReapedOnlyWhenConfigured() throws Exception {
    Engine byDefault = engine("");
    Engine zeroGrace = engine("families:\n  pythonShm:\n    grace: 10s\n");
    Engine reaping = engine("families:\n  pythonShm:\n    reap: true\n    grace: 10s\n");
    Owner owner = start("hold");
    for (Engine e : List.of(byDefault, zeroGrace, reaping)) {
      assertThat(of(e.judge(), owner.segment()).verdict()).isEqualTo(Verdict.HELD);
    }

    killAndWait(owner.pid(), owner.tracker());
    assertThat(exists(owner.segment())).as("nobody unlinked it: the leak SGLang's CI saw").isTrue();

    // Its only holder has exited, but a Python creator may hand a segment on and exit: not leaked at once.
    Assessment waiting = of(byDefault.clean(false).judgement(), owner.segment());
    assertThat(waiting.verdict()).isEqualTo(Verdict.GRACE);
    assertThat(waiting.reason()).contains("grace is 10m");
    Thread.sleep(11_000); // past the least grace a handed-on family may have (10s)

    Assessment reported = of(zeroGrace.clean(false).judgement(), owner.segment());
    assertThat(reported.verdict()).isEqualTo(Verdict.LEAKED);
    assertThat(reported.reason()).contains("reported, not reaped: families.pythonShm.reap is off");
    assertThat(exists(owner.segment())).as("reported, not reaped").isTrue();

    PassReport reaped = reaping.clean(false);
    assertThat(reaped.outcomes()).singleElement().satisfies(o -> {
      assertThat(o.candidate().segment().displayName()).isEqualTo(owner.segment());
      assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
    });
    assertThat(exists(owner.segment())).as("reaped once the configuration turns it on").isFalse();
  }

  @Test
  void aCleanOwnerLeavesNothingAndAHandedOnSegmentIsNotReaped() throws Exception {
    Engine engine = engine("families:\n  pythonShm:\n    grace: 10m\n");
    Owner clean = start("hold");
    assertThat(of(engine.judge(), clean.segment()).verdict()).isEqualTo(Verdict.HELD);
    clean.process().getOutputStream().close();
    assertThat(clean.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(exists(clean.segment())).as("close() and unlink()").isFalse();

    // A creator that hands its segment on: it exits, the segment stays for a consumer to attach by name.
    Owner creator = start("hand-on");
    assertThat(creator.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    PassReport after = engine.clean(false);
    Assessment meant = of(after.judgement(), creator.segment());
    assertThat(meant.verdict()).isEqualTo(Verdict.GRACE);
    assertThat(after.outcomes()).isEmpty();
    assertThat(exists(creator.segment())).isTrue();

    Owner consumer = start("attach", creator.segment());
    assertThat(consumer.said).containsExactly("attached", "hello");
    assertThat(of(engine.judge(), creator.segment()).verdict()).isEqualTo(Verdict.HELD);
    consumer.process().getOutputStream().close();
    assertThat(consumer.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    Files.delete(DEV_SHM.resolve(creator.segment()));
  }

  static {
    try {
      Files.createDirectories(Sandbox.MOUNTS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
