package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.MIB;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.cli.DoctorText;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Nvml;

/**
 * The reports of SCENARIOS.md that need a GPU, Kubernetes or systemd, recreated as fixture hosts
 * and rendered as a user would see them (kept under target/doctor-examples for the README).
 */
class DoctorExamplesTest {
  private static final Path EXAMPLES = Path.of(System.getProperty("user.dir"), "target", "doctor-examples");

  @TempDir Path root;

  @Test
  void podWithTheRuntimes64MbOnAnEightGpuNode() {
    HostFixture host = new HostFixture(root).gpus(8, "570.124.06")
        .containerDevices(4711, List.of(0, 1, 2, 3, 4, 5, 6, 7), List.of());
    host.containerShm(301, 4711, "pod:7c9e6679-7425-40de-944b-e07fc1f90ae7", 64 * MIB, 0);

    String text = render("pod-64m.txt", new ShmSizeCheck(), host);

    assertThat(text).contains("[shm-too-small] pod:7c9e6679-7425-40de-944b-e07fc1f90ae7:/dev/shm is 64.0M; 8 NCCL ranks")
        .contains("sizeLimit: 1Gi");
  }

  @Test
  void removeIpcOnAHostWhoseJobsRunAsOrdinaryUsers() {
    HostFixture host = new HostFixture(root).dir("/run/systemd/system")
        .file("/etc/systemd/logind.conf", "[Login]\n#KillUserProcesses=no\n#RemoveIPC=yes\n");
    ShmMount shm = host.hostShm(32 * GIB, 80 * MIB);
    host.process(20311, "python3", 1001, "alice", "slurm-job:88123");
    host.holds(20311, host.segment(shm, "nccl-q8RzT1", 9_637_892, 1001, Duration.ofSeconds(3)));

    String text = render("logind.txt", new RemoveIpcCheck(), host);

    assertThat(text).contains("[logind-removeipc] systemd-logind deletes every /dev/shm file of alice (uid 1001)");
  }

  @Test
  void twoContainersOneGpuEachOnThe570Driver() {
    HostFixture host = new HostFixture(root).gpus(2, "570.124.06")
        .containerDevices(5101, List.of(0), List.of(0)).containerDevices(5202, List.of(1), List.of(0));
    host.containerShm(310, 5101, "pod:1b4e28ba-2fa1-11d2-883f-0016d3cca427", GIB, 0);
    host.containerShm(311, 5202, "pod:6fa459ea-ee8a-3ca4-894e-db77e160355e", GIB, 0);

    String text = render("cumem.txt", new CuMemImportCheck(), host);

    assertThat(text).contains("[cumem-import-ordinal] 2 containers here each see one GPU");
  }

  @Test
  void nvlsOnEightH100sWithAFullGpu() {
    List<Nvml.Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long free = i == 3 ? 900 * MIB : 1200 * MIB;
      gpus.add(new Nvml.Gpu(i, "NVIDIA H100 80GB HBM3", 80 * GIB, free, 80 * GIB - free, 9, 0));
    }
    HostFixture host = new HostFixture(root).gpuMemory(new Nvml.Reading(gpus, null));

    String text = render("nvls.txt", new NvlsHeadroomCheck(), host);

    assertThat(text).contains("[nvls-headroom] GPU 0, GPU 1, GPU 2, GPU 3");
  }

  private String render(String name, Check check, HostFixture host) {
    String text = DoctorText.render(new Doctor(List.of(check)).examine(host.context()));
    try {
      Files.createDirectories(EXAMPLES);
      Files.writeString(EXAMPLES.resolve(name), text);
    } catch (IOException e) {
      // for the README only
    }
    return text;
  }
}
