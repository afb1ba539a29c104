package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.TreeMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.MountReport;
import org.shmguard.gpu.NcclFacts;

/**
 * The cross-container cuMem import failure (SCENARIOS.md #5): two or more containers on this node,
 * each seeing one GPU as its device 0, and the 570 driver, whose user-mode part fails
 * cuMemImportFromShareableHandle with "invalid device ordinal" on NCCL's first transfer between
 * them (NCCL 2.26.2, CUDA 12.8: NVIDIA/nccl #1647). The layout is read from each container's /dev,
 * the driver from /proc/driver/nvidia/version.
 */
final class CuMemImportCheck implements Check {
  @Override
  public String name() {
    return "cumem-import";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    Map<String, NamespaceDevices> singles = new TreeMap<>(); // sorted: the same host gives the same report
    for (MountReport r : ctx.judgement().mounts()) {
      ShmMount m = r.mount();
      if (!m.origin().ofContainer() || m.pids().isEmpty()) {
        continue;
      }
      NamespaceDevices d = ctx.devices().of(m.pids().get(0));
      if (d.readable() && d.gpuCount() == 1) {
        singles.put(m.container() != null ? m.container() : "pid " + m.pids().get(0), d);
      }
    }
    Set<Integer> distinct = new HashSet<>();
    singles.values().forEach(d -> distinct.add(d.gpuMinors().get(0)));
    if (singles.size() < 2 || distinct.size() < 2) {
      return List.of();
    }
    GpuHost gpus = ctx.gpus();
    List<String> evidence = new ArrayList<>();
    evidence.add(gpus.versionLine() == null ? "driver version unknown: /proc/driver/nvidia/version cannot be read"
        : "/proc/driver/nvidia/version: " + gpus.versionLine().strip());
    singles.forEach((who, d) -> evidence.add(who + " sees one GPU: /dev/nvidia" + d.gpuMinors().get(0)
        + (d.imexChannels().isEmpty() ? "" : ", IMEX channel(s) " + d.imexChannels())));
    evidence.add("known: NVIDIA/nccl #1647, NCCL 2.26.2 with CUDA 12.8, two containers with one GPU each on one node:"
        + " init succeeds, then ncclP2pImportShareableBuffer fails with CUDA error 101; the same import works across two"
        + " nodes (kubernetes-sigs/dra-driver-nvidia-gpu #294)");
    evidence.add("not known here: the NCCL release the jobs use (it lives in their containers), and the first driver release"
        + " with the fix");
    List<String> fix = List.of(
        "upgrade the NVIDIA driver past the " + NcclFacts.CUMEM_IMPORT_ORDINAL_BUG_DRIVER_BRANCH
            + " branch (reported fixed in later drivers), then rerun the job",
        "or run the ranks that talk to each other in one container that sees all their GPUs",
        "or NCCL_P2P_DISABLE=1 for the job: NCCL then skips the P2P transport, where the failing import sits"
            + " (slower; not verified on an affected host)");
    int branch = gpus.driverBranch();
    String layout = singles.size() + " containers here each see one GPU (" + String.join(", ", singles.keySet()) + ")";
    if (branch == NcclFacts.CUMEM_IMPORT_ORDINAL_BUG_DRIVER_BRANCH) {
      return List.of(Finding.of("cumem-import-ordinal", Severity.WARNING, null,
          layout + " on driver " + gpus.driverVersion() + ": NCCL 2.26 between them can fail its first transfer with"
              + " cuMemImportFromShareableHandle \"invalid device ordinal\" (a bug in the 570 driver's user-mode part)",
          evidence, fix));
    }
    String driver = branch < 0 ? "an unknown driver" : "driver " + gpus.driverVersion();
    return List.of(Finding.of("cumem-import-ordinal", Severity.INFO, null,
        layout + ", the layout in which the " + NcclFacts.CUMEM_IMPORT_ORDINAL_BUG_DRIVER_BRANCH
            + " driver fails cuMemImportFromShareableHandle with \"invalid device ordinal\"; this host runs " + driver,
        evidence, branch < 0 ? fix : List.of("nothing, unless jobs report \"invalid device ordinal\": then see the steps in docs/troubleshooting.md")));
  }
}
