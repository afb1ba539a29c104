package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.host.BindMounts;
import org.shmguard.host.HostPaths;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * /proc files an ordinary user makes as large as the kernel lets them: a process's maps (65,000
 * mappings of a file whose path is nearly PATH_MAX long: about 250 MiB of text) and the mountinfo
 * of a user namespace of theirs (thousands of binds on such a path: about 8 KiB a line). A
 * {@code clean} under the unit's heap (-Xmx96m, -XX:+ExitOnOutOfMemoryError) must still reap
 * another user's leak: shmguard reads those files a bounded piece at a time, never whole.
 */
class HugeProcFilesTest {
  private TmpfsMount watched;
  private TmpfsMount workspace;
  private final List<Process> started = new ArrayList<>();

  @BeforeEach
  void mount() {
    watched = TmpfsMount.create("size=8m,mode=1777");
    workspace = TmpfsMount.create("size=64m,mode=1777");
  }

  @AfterEach
  void cleanUp() throws InterruptedException {
    for (Process p : started) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    workspace.close();
    watched.close();
  }

  @Test
  void aProcessWithTheLargestMapsAUserCanMakeDoesNotStopACleanUnderTheUnitsHeap() throws Exception {
    Path bin = CProgram.build("redteam/many-maps.c");
    Path leak = watched.createSegment("nccl-Leak01", 4_100);
    long made = startAsNobody(List.of(bin.toString(), workspace.path().toString(), "65000"));
    assertThat(made).as("mappings made").isGreaterThan(30_000);

    Result r = cleanUnderTheUnitsHeap(TestConfig.watching(watched.path(), "0s"));

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(leak).doesNotExist();
  }

  @Test
  void aUserNamespaceWithThousandsOfLongMountsDoesNotStopACleanUnderTheUnitsHeap() throws Exception {
    Path bin = CProgram.build("redteam/many-mounts.c");
    Path leak = watched.createSegment("nccl-Leak02", 4_100);
    long made = startAsNobody(List.of("unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
        bin.toString(), workspace.path().toString(), "8000"));
    assertThat(made).as("binds made").isGreaterThan(4_000);
    long t0 = System.nanoTime();
    new BindMounts(HostPaths.system()).roots(watched.dev());
    // The reap's bind-mount check reads this with the batch's leases held: what the user adds to it.
    System.out.printf("bind-mount check beside %d binds of a %d-byte path: %d ms%n", made,
        Files.readAllBytes(Path.of("/proc/self/mountinfo")).length >= 0 ? 3900 : 0, (System.nanoTime() - t0) / 1_000_000);

    Result r = cleanUnderTheUnitsHeap(TestConfig.write("mounts: [auto, " + watched.path() + "]\nreap:\n  grace: 0s\n"
        + "  requireHostPidNamespace: false\n"));

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(leak).doesNotExist();
  }

  /** Starts {@code cmd} as uid 65534 and returns the count it says after "ready". */
  private long startAsNobody(List<String> cmd) throws IOException {
    List<String> all = new ArrayList<>(List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"));
    all.addAll(cmd);
    Process p = new ProcessBuilder(all).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    started.add(p);
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = p.getInputStream().read()) >= 0 && c != '\n') {
      line.append((char) c);
    }
    assertThat(line.toString()).as("the user's process started").startsWith("ready ");
    return Long.parseLong(line.substring("ready ".length()));
  }

  record Result(int status, String err) {}

  static Result cleanUnderTheUnitsHeap(Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Sandbox.javaBinary());
    cmd.addAll(unitJvmOptions());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "clean", "-c",
        config.toString()));
    Path err = Files.createTempFile(Sandbox.MOUNTS, "clean-", ".err");
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(err.toFile()).start();
      assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("clean finishes").isTrue();
      return new Result(p.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(err);
    }
  }

  /** The unit's ExecStart JVM options. */
  private static List<String> unitJvmOptions() throws IOException {
    String exec = Files.readString(Path.of("systemd/shmguard.service")).lines()
        .filter(l -> l.startsWith("ExecStart=")).findFirst().orElseThrow();
    List<String> words = Arrays.asList(exec.substring("ExecStart=".length()).trim().split("\\s+"));
    List<String> options = words.subList(1, words.indexOf("-jar"));
    assertThat(options).contains("-Xmx96m", "-XX:+ExitOnOutOfMemoryError");
    return options;
  }
}
