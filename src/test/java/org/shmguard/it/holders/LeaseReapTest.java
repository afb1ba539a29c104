package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HostPaths;
import org.shmguard.model.HolderIndex;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The last check before an unlink, on real processes: holders that no /proc walk sees keep their
 * files (the kernel refuses the write lease), and an open by name that races the reap never ends
 * with an fd to a removed file.
 */
class LeaseReapTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private TmpfsMount shm;
  private Path config;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create("size=64m,mode=1777");
    config = TestConfig.watching(shm.path(), "0s");
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  @Test
  void fdInFlightInAUnixSocketKeepsItsFileAndTheReceiverGetsItWhole() {
    Path seg = shm.createSegment("nccl-Scm001", 9_637_892);
    try (HiddenHolder receiver = HiddenHolder.start("scm", seg.toString())) {
      CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(seg).exists();
      JsonNode action = CliRun.actionFor(clean.json(), "nccl-Scm001");
      assertThat(action.get("result").asText()).isEqualTo("skipped");
      assertThat(action.get("detail").asText()).contains("no process shows").contains("in flight");

      receiver.say("recv");
      assertThat(receiver.readLine()).isEqualTo("nlink 1");
    }
    assertThat(CliRun.of("clean", "-c", config.toString()).status()).isZero();
    assertThat(seg).doesNotExist();
  }

  @Test
  void fileRegisteredInAnIoUringIsKeptUntilUnregistered() {
    Path seg = shm.createSegment("nccl-Uring1", 4_100);
    try (HiddenHolder ring = HiddenHolder.start("uring", seg.toString())) {
      JsonNode action = CliRun.actionFor(CliRun.of("clean", "--json", "-c", config.toString()).json(), "nccl-Uring1");

      assertThat(seg).exists();
      assertThat(action.get("result").asText()).isEqualTo("skipped");
      assertThat(action.get("detail").asText()).contains("io_uring");

      ring.say("unregister");
      assertThat(ring.readLine()).isEqualTo("unregistered");
      // The ring drops its reference to the file asynchronously: clean until it is gone.
      Eventually.until("the unregistered file is reaped", PATIENCE, () -> {
        CliRun.of("clean", "-c", config.toString());
        return !Files.exists(seg);
      });
    }
  }

  /**
   * A file mounted into another mount namespace (a container's {@code -v /dev/shm/F:/x}) is held by
   * the mount, which opens nothing: no fd shows it and the kernel grants the lease.
   */
  @Test
  void fileBindMountedIntoAnotherMountNamespaceIsKeptAndTheMountStillShowsIt() throws Exception {
    Path seg = shm.createSegment("nccl-Bind01", 4_100);
    Path target = Files.createTempFile(Sandbox.MOUNTS, "bind-target", "");
    try (HiddenHolder container = HiddenHolder.start("bind", seg.toString(), target.toString())) {
      JsonNode dry = CliRun.actionFor(CliRun.of("clean", "--dry-run", "--json", "-c", config.toString()).json(), "nccl-Bind01");
      JsonNode action = CliRun.actionFor(CliRun.of("clean", "--json", "-c", config.toString()).json(), "nccl-Bind01");

      assertThat(dry.get("result").asText()).isEqualTo("skipped");
      assertThat(dry.get("detail").asText()).contains("mounted elsewhere");

      assertThat(action.get("result").asText()).isEqualTo("skipped");
      assertThat(action.get("detail").asText()).contains("mounted elsewhere").contains(target.toString());
      assertThat(seg).exists();
      assertThat(hiddenNames()).isEmpty();
      container.say("nlink");
      assertThat(container.readLine()).isEqualTo("nlink 1");
    } finally {
      Files.deleteIfExists(target);
    }
    // The holder's exit ends its namespace and the mount with it: nothing holds the file now.
    assertThat(CliRun.of("clean", "-c", config.toString()).status()).isZero();
    assertThat(seg).doesNotExist();
  }

  @Test
  void plainLeakOfAnotherUserIsReapedAndDryRunTakesTheLeaseButRemovesNothing() {
    Path seg = shm.createSegment("nccl-Plain1", 4_100);
    Cmd.run("chown", "65534:65534", seg.toString()); // a lease on another user's file needs CAP_LEASE

    JsonNode dry = CliRun.of("clean", "--dry-run", "--json", "-c", config.toString()).json();
    assertThat(CliRun.actionFor(dry, "nccl-Plain1").get("result").asText()).isEqualTo("would-reap");
    assertThat(seg).exists();
    assertThat(hiddenNames()).isEmpty();

    JsonNode wet = CliRun.of("clean", "--json", "-c", config.toString()).json();
    assertThat(CliRun.actionFor(wet, "nccl-Plain1").get("result").asText()).isEqualTo("reaped");
    assertThat(seg).doesNotExist();
    assertThat(hiddenNames()).isEmpty();
  }

  @Test
  void dryRunReportsAFileHeldOnlyInFlightAsSkipped() {
    Path seg = shm.createSegment("nccl-ScmDry", 4_100);
    try (HiddenHolder receiver = HiddenHolder.start("scm", seg.toString())) {
      JsonNode dry = CliRun.of("clean", "--dry-run", "--json", "-c", config.toString()).json();

      assertThat(CliRun.actionFor(dry, "nccl-ScmDry").get("result").asText()).isEqualTo("skipped");
      assertThat(seg).exists();
    }
  }

  /** The lease alone, with a confirming pass that sees no holder at all: what the kernel knows decides. */
  @Test
  void sharedMappingWithItsFdClosedRefusesTheLeaseEvenUnseenByProc() {
    Path mapped = shm.createSegment("nccl-Mapd01", 9_637_892);
    Path plain = shm.createSegment("nccl-Free01", 4_100);
    Engine engine = Engine.create(TestConfig.load(config), HostPaths.system());
    try (Holder map = Holder.start("map", mapped.toString())) {
      Judgement j = engine.judge();
      // Judged while the mapping exists, the mapped file is held: judge it again as if nobody held it.
      Judgement unheld = judgeWithoutHolders();
      List<ReapOutcome> done = new Reaper(devs -> blindPass()).execute(unheld.plan(), false);

      assertThat(j.plan().candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-Free01");
      assertThat(done).extracting(o -> o.candidate().segment().displayName() + " " + o.result())
          .containsExactlyInAnyOrder("nccl-Mapd01 SKIPPED", "nccl-Free01 REAPED");
      assertThat(mapped).exists();
      assertThat(plain).doesNotExist();
    }
  }

  /** Without CAP_LEASE, root gets no lease on another user's file: kept and said, never unlinked unchecked. */
  @Test
  void withoutCapLeaseAnotherUsersFileIsKeptAndTheReasonSaysLeasesAreUnavailable() throws Exception {
    Path seg = shm.createSegment("nccl-NoCap1", 4_100);
    Cmd.run("chown", "65534:65534", seg.toString());

    Cmd.Result r = Cmd.exec("setpriv", "--bounding-set", "-lease", "--inh-caps", "-lease", Sandbox.javaBinary(),
        "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main",
        "clean", "--json", "-c", config.toString());

    assertThat(r.status()).as(r.err()).isZero();
    JsonNode action = CliRun.actionFor(new ObjectMapper().readTree(r.out()), "nccl-NoCap1");
    assertThat(action.get("result").asText()).isEqualTo("skipped");
    assertThat(action.get("detail").asText()).contains("leases are unavailable").contains("CAP_LEASE");
    assertThat(seg).exists();
  }

  @Test
  void racersOpeningByNameDuringCleanNeverGetARemovedFileAndNothingUnopenedIsMissed() throws Exception {
    List<Path> raced = segments("nccl-Race", 40);
    List<Path> quiet = segments("nccl-Calm", 20);
    CliRun.of("clean", "--dry-run", "-c", config.toString()); // loads the classes before the racers take the CPUs
    List<HiddenHolder> racers = startRacers(raced, 8, 6_000);
    List<JsonNode> actions = new ArrayList<>();
    int passes = 0;
    try {
      long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
      while (System.nanoTime() < end) {
        passes++;
        CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());
        assertThat(clean.status()).as(clean.err()).isZero();
        clean.json().get("actions").forEach(actions::add);
        recreateMissing(raced); // so that every pass reaps under the racers' opens
      }
    } finally {
      assertNoRacerGotARemovedFile(racers);
    }
    System.out.printf("clean under racers: %d passes, %d reaped, %d kept%n", passes,
        actions.stream().filter(a -> a.get("result").asText().equals("reaped")).count(),
        actions.stream().filter(a -> a.get("result").asText().equals("skipped")).count());
    assertThat(actions).anySatisfy(a -> {
      assertThat(a.get("segment").get("name").asText()).startsWith("nccl-Race");
      assertThat(a.get("result").asText()).isEqualTo("reaped");
    });

    assertThat(quiet).allSatisfy(p -> assertThat(p).doesNotExist());
    assertThat(actions).allSatisfy(a -> assertThat(a.get("result").asText()).isIn("reaped", "skipped", "failed"));
    // Once the racers have stopped, nothing holds the rest: all of it goes, and so does any file an
    // opener raced while its old name was being taken (left under its hidden name, not stranded).
    CliRun.of("clean", "-c", config.toString());
    assertThat(raced).allSatisfy(p -> assertThat(p).doesNotExist());
    assertThat(hiddenNames()).isEmpty();
  }

  @Test
  void racersOpeningByNameDuringDaemonReapsNeverGetARemovedFile() throws Exception {
    List<Path> raced = segments("nccl-DRac", 30);
    try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), new RecordingSink(),
        ServiceNotifier.none())) {
      Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
      recreateMissing(raced);
      List<HiddenHolder> racers = startRacers(raced, 6, 6_000);
      long first = daemon.status().passes();
      try {
        long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
        while (System.nanoTime() < end) {
          long passes = daemon.status().passes();
          daemon.sweepNow();
          Eventually.until("another pass", PATIENCE, () -> daemon.status().passes() > passes);
          recreateMissing(raced); // so that every pass reaps under the racers' opens
        }
      } finally {
        assertNoRacerGotARemovedFile(racers);
      }
      System.out.printf("daemon under racers: %d passes, %d reaped in all%n", daemon.status().passes() - first,
          daemon.status().reaped());
      // Files an opener raced while the test re-created their old names are left under their hidden
      // names (the put-back found the name taken); the daemon reaps those too once nothing holds them.
      Eventually.until("every file the racers left is reaped, hidden names included", PATIENCE, () -> {
        daemon.sweepNow();
        return raced.stream().noneMatch(Files::exists) && hiddenNames().isEmpty();
      });
    }
  }

  private List<Path> segments(String prefix, int n) {
    List<Path> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(shm.createSegment(prefix + String.format("%02d", i), 4_100));
    }
    return out;
  }

  private void recreateMissing(List<Path> files) {
    files.stream().filter(p -> !Files.exists(p)).forEach(p -> shm.createSegment(p.getFileName().toString(), 4_100));
  }

  private static List<HiddenHolder> startRacers(List<Path> files, int count, int millis) {
    List<String> args = new ArrayList<>(List.of("racer", Integer.toString(millis)));
    files.forEach(p -> args.add(p.toString()));
    List<HiddenHolder> racers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      racers.add(HiddenHolder.start(args.toArray(String[]::new)));
    }
    return racers;
  }

  /** Waits for each racer's tally ("opened N unlinked M") and asserts M is 0 for all. */
  private static void assertNoRacerGotARemovedFile(List<HiddenHolder> racers) {
    long opened = 0;
    List<String> tallies = new ArrayList<>();
    for (HiddenHolder r : racers) {
      String tally = r.readLine();
      r.close();
      tallies.add(tally);
      assertThat(tally).startsWith("opened ");
      opened += Long.parseLong(tally.split(" ")[1]);
    }
    System.out.printf("racers: %s%n", tallies);
    assertThat(opened).as("racers opened files at all").isPositive();
    assertThat(tallies).allSatisfy(t -> assertThat(t).endsWith(" unlinked 0"));
  }

  private List<String> hiddenNames() {
    try (Stream<Path> s = Files.list(shm.path())) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".shmguard-reap-")).toList();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private Judgement judgeWithoutHolders() {
    // A fresh engine whose scanner ignores every process: the file looks unheld to /proc.
    org.shmguard.host.Observer blind = new org.shmguard.host.Observer(HostPaths.system(), false,
        List.of(shm.path().toString()), java.time.Clock.systemUTC());
    var snap = blind.observe(false);
    var stripped = new org.shmguard.model.Snapshot(snap.takenAt(), snap.mounts(), snap.segments(), HolderIndex.empty(),
        snap.livePids(), snap.processes(), snap.problems(), snap.warnings(), snap.hostPidNamespace(),
        snap.processesScanned());
    return org.shmguard.policy.Judge.judge(stripped, org.shmguard.policy.HolderHistory.empty(),
        TestConfig.load(config).reap().policy());
  }

  private static HolderPass blindPass() {
    return new HolderPass(HolderIndex.empty(), new BitSet(), List.of(), 0, 0);
  }
}
