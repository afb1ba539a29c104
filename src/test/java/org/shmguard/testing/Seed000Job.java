package org.shmguard.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * SCENARIOS.md #1 (seed 000) inside a running container, whatever runtime made it: the checks a
 * user of a 64 MB container with four GPUs makes, run the same way on podman and on Docker. The
 * container has shmguard_client.py, shmguard-launch and src/test/resources/seed000/nccl_ranks.py
 * in /usr/local/bin, and the daemon's socket directory bound at /run/shmguard; the daemon runs on
 * the host with {@code remount.targetSize: 160M} and a real journald.
 *
 * <pre>{@code
 * Seed000Job job = new Seed000Job("docker", "docker:" + id12, (options, command) -> docker exec ...);
 * job.adviceInsideIsForItsOwn64Mb(job.shmDev());
 * job.firstStartFailsAndTheDaemonGrowsItsShm(160 * MIB, "nosuid", "nodev", "noexec");
 * }</pre>
 */
public final class Seed000Job {
  private static final long MIB = 1L << 20;

  private final String runtime;
  private final String label;
  /** Runs a command in the container: the exec's options (such as {@code --user}), then the command. */
  private final BiFunction<List<String>, String[], Cmd.Result> exec;

  /**
   * @param runtime the runtime's command, as its messages name it ("podman", "docker")
   * @param label the container's label in shmguard's output ("docker:0123456789ab")
   */
  public Seed000Job(String runtime, String label, BiFunction<List<String>, String[], Cmd.Result> exec) {
    this.runtime = runtime;
    this.label = label;
    this.exec = exec;
  }

  /** {@code command} in the container as root; its result whatever its status. */
  public Cmd.Result run(String... command) {
    return exec.apply(List.of(), command);
  }

  /** {@code command} in the container as root; its output, or an AssertionError if it failed. */
  public String inside(String... command) {
    Cmd.Result r = run(command);
    if (r.status() != 0) {
      throw new AssertionError("in the container: " + String.join(" ", command) + " failed (" + r.status() + "): " + r.err());
    }
    return r.out();
  }

  /** {@code command} in the container as uid 65534, an ordinary user. */
  public Cmd.Result asUser(String... command) {
    return exec.apply(List.of("--user", "65534:65534"), command);
  }

  /** The device of the container's /dev/shm, MAJ:MIN, as the container sees it. */
  public String shmDev() {
    return inside("python3", "-I", "-S", "-c",
        "import os; d = os.stat('/dev/shm').st_dev; print('%d:%d' % (os.major(d), os.minor(d)))").strip();
  }

  /**
   * The advice socket, asked from inside by an ordinary user with an 8 MiB file in the container's
   * /dev/shm, answers for the container's own 64 MiB mount ({@code shmDev}): SHM off for 4 ranks;
   * shmguard-launch sets it. The file is left for {@link #firstStartFailsAndTheDaemonGrowsItsShm}.
   */
  public void adviceInsideIsForItsOwn64Mb(String shmDev) {
    inside("fallocate", "-l", "8M", "/dev/shm/model-weights");
    List<String> advice = new ArrayList<>();
    long asked = System.nanoTime();
    Eventually.until("the daemon's answer with the 8 MiB file counted", Duration.ofSeconds(30), () -> {
      advice.clear();
      advice.addAll(asUser("python3", "-I", "-S", "/usr/local/bin/shmguard_client.py", "advise", "--local-ranks", "4",
          "--nccl-version", "2.21.5").out().lines().toList());
      return advice.contains("SHMGUARD_FREE_BYTES=" + 56 * MIB);
    });
    System.out.printf("shmguard_client.py advise in the %s container (%d ms until it counted the file):%n%s%n", runtime,
        (System.nanoTime() - asked) / 1_000_000, String.join("\n", advice));
    assertThat(advice).contains("NCCL_SHM_DISABLE=1", "SHMGUARD_ADVICE=shm-disable", "SHMGUARD_MOUNT=" + label + ":/dev/shm",
        "SHMGUARD_DEV=" + shmDev, "SHMGUARD_SIZE_BYTES=" + 64 * MIB, "SHMGUARD_LOCAL_RANKS=4");
    Cmd.Result launch = asUser("shmguard-launch", "--local-ranks", "4", "--nccl-version", "2.21.5", "--", "sh", "-c",
        "echo NCCL_SHM_DISABLE=$NCCL_SHM_DISABLE");
    assertThat(launch.status()).as(launch.err()).isZero();
    assertThat(launch.out()).isEqualTo("NCCL_SHM_DISABLE=1\n");
    assertThat(launch.err()).isEqualTo("shmguard-launch: set NCCL_SHM_DISABLE=1 [advice: shm-disable]: needs 28.0 MiB of "
        + label + ":/dev/shm, 56.0 MiB free (--verbose: why)\n");
  }

  /**
   * Without the 8 MiB file, the job's first start fails for room at 86% used (6 of its 8 receive
   * segments fit), below capacity.critical: only the failed allocation tells the daemon the job
   * needed more. The daemon grows the container's tmpfs to {@code cap} (one remount_grown, only
   * {@code size=} changed from the options {@code before} names), the second start runs, and the
   * host's /dev/shm keeps its device and size.
   */
  public void firstStartFailsAndTheDaemonGrowsItsShm(long cap, String... before) {
    String hostDev = Cmd.run("mountpoint", "-d", "/dev/shm").strip();
    inside("rm", "/dev/shm/model-weights");
    String optionsBefore = inside("findmnt", "-n", "-o", "OPTIONS", "/dev/shm");
    assertThat(optionsBefore).contains(before).contains("size=65536k");
    Cmd.Result first = run("python3", "/usr/local/bin/nccl_ranks.py");
    long failedAt = System.currentTimeMillis();
    assertThat(first.status()).as(first.out() + first.err()).isEqualTo(1);
    assertThat(first.out()).contains("failed to extend /dev/shm/nccl-").contains("No space left on device");
    Eventually.until("the container's /dev/shm grown to " + cap / MIB + " MiB", Duration.ofSeconds(60),
        () -> inside("df", "-B1", "--output=size", "/dev/shm").contains(Long.toString(cap)));
    System.out.println("the job's first start:\n" + first.out() + "df /dev/shm in the container after the remount:\n"
        + inside("df", "-h", "/dev/shm"));
    Cmd.Result second = run("python3", "/usr/local/bin/nccl_ranks.py");
    assertThat(second.status()).as(second.out() + second.err()).isZero();
    assertThat(second.out()).contains("job ran: 4 ranks made their NCCL segments");

    List<JsonNode> grown = Journald.entries("SHMGUARD_EVENT", "remount_grown");
    assertThat(grown).hasSize(1);
    JsonNode e = grown.get(0);
    System.out.printf("remount_grown %d ms after %s exec returned the job's failure%n",
        e.get("__REALTIME_TIMESTAMP").asLong() / 1000 - failedAt, runtime);
    assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(label + ":/dev/shm");
    assertThat(e.get("SHM_SIZE_BEFORE").asText()).isEqualTo(Long.toString(64 * MIB));
    assertThat(e.get("SHM_SIZE_AFTER").asText()).isEqualTo(Long.toString(cap));
    assertThat(inside("findmnt", "-n", "-o", "OPTIONS", "/dev/shm")).as("only the size changed")
        .isEqualTo(optionsBefore.replace("size=65536k", "size=" + cap / 1024 + "k"));
    assertThat(Cmd.run("mountpoint", "-d", "/dev/shm").strip()).isEqualTo(hostDev);
    assertThat(Cmd.run("df", "-B1", "--output=size", "/dev/shm")).as("the host's /dev/shm keeps its size")
        .contains(Long.toString(64 * MIB));
  }

  /** With remount off, the job's failed start is in the journal with why its /dev/shm was not grown, and it stays at 64 MiB. */
  public void withRemountOffItStaysAt64MbAndTheJournalSaysWhy() {
    Cmd.Result first = run("python3", "/usr/local/bin/nccl_ranks.py");
    assertThat(first.status()).as(first.out() + first.err()).isEqualTo(1);
    Eventually.until("an allocation_failed entry for the container", Duration.ofSeconds(60),
        () -> Journald.entries("SHMGUARD_EVENT", "allocation_failed").stream()
            .anyMatch(n -> n.path("SHM_MOUNT").asText().equals(label + ":/dev/shm")));

    JsonNode failed = Journald.entries("SHMGUARD_EVENT", "allocation_failed").get(0);
    assertThat(failed.get("MESSAGE").asText()).endsWith("; not grown: remounting is off (remount.enabled: false)");
    assertThat(failed.get("SHM_REMOUNT").asText()).isEqualTo("remounting is off (remount.enabled: false)");
    assertThat(Journald.entries("SHMGUARD_EVENT", "remount_grown")).isEmpty();
    assertThat(inside("df", "-B1", "--output=size", "/dev/shm")).contains(Long.toString(64 * MIB));
  }
}
