package org.shmguard.it.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * shmguard doctor on real tmpfs mounts and real holder processes in the test sandbox: a
 * "container" with Docker's 64 MB /dev/shm, a leaked segment, a 0-byte failed creation, an
 * unlinked segment still mapped. The sandbox is a PID namespace of its own, so every run here is
 * also "a container without hostPID". Human outputs are kept under target/doctor-examples.
 */
class DoctorOnRealMountsTest {
  private static final Path EXAMPLES = Path.of(System.getProperty("user.dir"), "target", "doctor-examples");

  @Test
  void containerWithDockersDefault64MbIsTooSmallForFourRanksAndThePrintedRemountFixesIt() {
    Sandbox.require();
    Path config = TestConfig.write("mounts: [auto]\n");
    try (Holder ctr = Holder.startInContainer("size=64m,mode=1777", "create-map:4100", "/dev/shm/nccl-Ctr001")) {
      CliRun run = CliRun.of("doctor", "--json", "--ranks", "4", "-c", config.toString());

      assertThat(run.status()).as(run.err()).isEqualTo(1);
      JsonNode f = containerFinding(run.json(), "shm-too-small");
      assertThat(f.get("severity").asText()).isEqualTo("error");
      assertThat(f.get("summary").asText()).contains("is 64.0M; 4 NCCL ranks need at least 73.6M");
      assertThat(f.get("evidence").get(0).asText()).contains("tmpfs of 64.0M (67,108,864 bytes)");
      String remount = null;
      for (JsonNode l : f.get("fix")) {
        if (l.asText().contains("nsenter -t ")) {
          remount = l.asText().substring(l.asText().indexOf("nsenter"));
        }
      }
      assertThat(remount).as("a remount through the container's namespace").isNotNull();
      // The advice engine's answer for a job starting now in that container: 4 ranks do not fit in
      // 64 MB with the SHM transport on, so without a known cuMem-capable driver it is SHM off.
      JsonNode advice = findings(run.json(), "daemon-advice").get(0);
      assertThat(advice.get("evidence").toString()).contains(ctrMount(run.json()) + ": NCCL_SHM_DISABLE=1");
      keep("container-64m.txt", CliRun.of("doctor", "--ranks", "4", "-c", config.toString()).out());

      Cmd.run("sh", "-c", remount);

      JsonNode after = CliRun.of("doctor", "--json", "--ranks", "4", "-c", config.toString()).json();
      assertThat(findings(after, "shm-too-small")).noneMatch(n -> n.get("subject").asText().startsWith("/proc/"));
    }
  }

  @Test
  void leakedSegmentAndZeroByteFailedCreationAreReportedWithBytesAndTime() {
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777")) {
      shm.createSegment("nccl-Lk0001", 9_637_892);
      shm.createSegment("nccl-Fa0001", 0);
      Path config = TestConfig.watching(shm.path(), "0s");

      CliRun run = CliRun.of("doctor", "--json", "-c", config.toString());

      assertThat(run.status()).as(run.err()).isEqualTo(1);
      for (JsonNode f : run.json().get("findings")) {
        assertThat(f.has("id") && f.has("severity") && f.has("summary") && f.get("evidence").isArray() && f.get("fix").isArray())
            .as("findings[].{id,severity,summary,evidence,fix}: " + f).isTrue();
      }
      JsonNode leaked = findings(run.json(), "leaked-segments").get(0);
      assertThat(leaked.get("subject").asText()).isEqualTo(shm.path().toString());
      assertThat(leaked.get("summary").asText()).startsWith("1 leaked segment(s) in " + shm.path() + " hold 9.2M, the oldest unchanged since ");
      assertThat(leaked.get("evidence").get(0).asText()).startsWith("nccl-Lk0001  9.2M  nccl-shm-recv  since ");
      JsonNode failed = findings(run.json(), "failed-creations").get(0);
      assertThat(failed.get("summary").asText()).startsWith("1 0-byte NCCL file(s) in " + shm.path());
      assertThat(failed.get("evidence").get(0).asText()).startsWith("nccl-Fa0001  0 bytes, unheld, created ");
      keep("leak-and-failed-creation.txt", CliRun.of("doctor", "-c", config.toString()).out());
    }
  }

  @Test
  void mountFilledByLeaksWhereARealExtensionFailedIsFullAndPointsToClean() {
    try (TmpfsMount shm = TmpfsMount.create("size=128m,mode=1777")) {
      for (int i = 10; i < 23; i++) {
        shm.createSegment("nccl-Old0" + i, 9_637_892);
      }
      // What NCCL 2.19+ does on a full tmpfs: create the file, fail to fallocate, leave it at 0 bytes.
      Cmd.Result ext = Cmd.exec("fallocate", "-l", "9637892", shm.file("nccl-New001").toString());
      assertThat(ext.status()).isNotZero();
      assertThat(ext.err()).contains("No space left on device");
      Path config = TestConfig.watching(shm.path(), "0s");

      CliRun run = CliRun.of("doctor", "--json", "--ranks", "4", "--nccl-version", "2.21.5", "-c", config.toString());

      assertThat(run.json().get("findings").findValuesAsText("id")).doesNotContain("shm-too-small");
      JsonNode full = findings(run.json(), "shm-full").get(0);
      assertThat(full.get("severity").asText()).isEqualTo("error");
      assertThat(full.get("summary").asText()).contains("free of 128M: a job of 4 ranks starting now needs 73.6M");
      assertThat(full.get("fix").get(0).asText()).startsWith("shmguard clean   (frees the 120M");
      assertThat(findings(run.json(), "failed-creations").get(0).get("evidence").get(0).asText()).startsWith("nccl-New001  0 bytes");
      keep("full-of-leaks.txt", CliRun.of("doctor", "--ranks", "4", "--nccl-version", "2.21.5", "-c", config.toString()).out());
    }
  }

  @Test
  void unlinkedButMappedSegmentIsHiddenUsageWithItsHolder() {
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Hid001", 9_637_892);
      Path config = TestConfig.watching(shm.path(), "2m");
      try (Holder h = Holder.start("map-unlink", seg.toString())) {
        JsonNode f = findings(CliRun.of("doctor", "--json", "-c", config.toString()).json(), "hidden-usage").get(0);

        assertThat(f.get("summary").asText()).startsWith("9.2M of " + shm.path() + " is held by 1 unlinked segment(s)");
        assertThat(f.get("evidence").toString()).contains("nccl-Hid001 (deleted)  held by " + h.pid() + " java (root)");
      }
    }
  }

  @Test
  void insideTheSandboxItSaysItIsNotInTheHostPidNamespace() {
    try (TmpfsMount shm = TmpfsMount.create("size=1g,mode=1777")) {
      JsonNode f = findings(CliRun.of("doctor", "--json", "-c", TestConfig.watching(shm.path(), "2m").toString()).json(),
          "not-host-pid-namespace").get(0);

      assertThat(f.get("severity").asText()).isEqualTo("warning");
      assertThat(f.get("fix").toString()).contains("hostPID: true");
    }
  }

  @Test
  void humanOutputGroupsFindingsBySeverity() {
    Sandbox.require();
    Path config = TestConfig.write("mounts: [auto]\n");
    try (Holder ctr = Holder.startInContainer("size=64m,mode=1777", "create-map:4100", "/dev/shm/nccl-Ctr002")) {
      CliRun run = CliRun.of("doctor", "--ranks", "4", "-c", config.toString());

      String out = run.out();
      assertThat(out).startsWith("shmguard doctor: ");
      assertThat(out.indexOf("\nERRORS\n")).isPositive().isLessThan(out.indexOf("\nWARNINGS\n"));
      assertThat(out.indexOf("\nWARNINGS\n")).isLessThan(out.indexOf("\nNOTES\n"));
      assertThat(out).contains("  [shm-too-small] ").contains("    fix: ");
    }
  }

  @Test
  void badNcclVersionIsAUsageErrorInOneSentence() {
    CliRun run = CliRun.of("doctor", "--nccl-version", "two.twenty");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).contains("--nccl-version: \"two.twenty\" is not an NCCL version such as 2.21.5").doesNotContain("Exception");
  }

  private static JsonNode containerFinding(JsonNode report, String id) {
    for (JsonNode f : findings(report, id)) {
      if (f.get("subject").asText().matches("/proc/\\d+/root/dev/shm")) {
        return f;
      }
    }
    throw new AssertionError("no " + id + " finding for the container: " + report.toPrettyString());
  }

  private static List<JsonNode> findings(JsonNode report, String id) {
    List<JsonNode> out = new ArrayList<>();
    report.get("findings").forEach(f -> {
      if (f.get("id").asText().equals(id)) {
        out.add(f);
      }
    });
    if (out.isEmpty()) {
      throw new AssertionError("no " + id + " finding: " + report.toPrettyString());
    }
    return out;
  }

  /** The container's mount as the doctor names it. */
  private static String ctrMount(JsonNode report) {
    return containerFinding(report, "shm-too-small").get("subject").asText();
  }

  private static void keep(String name, String text) {
    try {
      Files.createDirectories(EXAMPLES);
      Files.writeString(EXAMPLES.resolve(name), text);
    } catch (IOException e) {
      // examples are for the README; a test does not fail for want of them
    }
  }
}
