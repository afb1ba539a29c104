package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.text.Bytes;
import org.shmguard.nativ.Nvml;
import org.shmguard.gpu.NcclFacts;

/**
 * GPU memory headroom for NVLS (SCENARIOS.md #4): NCCL 2.17+ enables NVLS on NVSwitch systems of
 * compute capability 9.0 and later, and it takes about 1.5 GB of GPU memory per rank on one node;
 * a GPU with less free than that (a model that filled it) makes communicator set-up run out, and
 * NCCL 2.19 then hangs. Read through NVML where the driver is present; skipped with a note where
 * it is not.
 */
final class NvlsHeadroomCheck implements Check {
  @Override
  public String name() {
    return "nvls-headroom";
  }

  @Override
  public List<Finding> run(DoctorContext ctx) {
    Nvml.Reading reading = ctx.gpuMemory().read();
    if (reading.error() != null && reading.gpus().isEmpty()) {
      return List.of(Finding.of("nvls-not-checked", Severity.INFO, null,
          "GPU memory headroom for NVLS not checked: NVML is not available here",
          List.of(reading.error()), List.of("run shmguard doctor on the host, where the NVIDIA driver is installed")));
    }
    return assess(reading.gpus());
  }

  /** The decision, on NVML's numbers. */
  static List<Finding> assess(List<Nvml.Gpu> gpus) {
    if (gpus.size() < 2) {
      return List.of();
    }
    boolean anyCapable = gpus.stream().anyMatch(g -> g.computeMajor() < 0 || g.computeMajor() >= NcclFacts.NVLS_MIN_COMPUTE_MAJOR);
    if (!anyCapable) {
      return List.of();
    }
    List<String> short_ = new ArrayList<>();
    List<String> evidence = new ArrayList<>();
    boolean capabilityKnown = true;
    for (Nvml.Gpu g : gpus) {
      String cc = g.computeMajor() < 0 ? "compute capability unknown" : "compute " + g.computeMajor() + "." + g.computeMinor();
      evidence.add("GPU " + g.index() + " " + g.name() + " (" + cc + "): " + Bytes.human(g.freeBytes()) + " free of "
          + Bytes.human(g.totalBytes()) + " (NVML)");
      if (g.freeBytes() < NcclFacts.NVLS_GPU_BYTES_PER_RANK && (g.computeMajor() < 0 || g.computeMajor() >= NcclFacts.NVLS_MIN_COMPUTE_MAJOR)) {
        short_.add("GPU " + g.index());
        capabilityKnown &= g.computeMajor() >= 0;
      }
    }
    if (short_.isEmpty()) {
      return List.of();
    }
    evidence.add("NVLS needs about " + Bytes.human(NcclFacts.NVLS_GPU_BYTES_PER_RANK) + " of GPU memory per rank on one node"
        + " (2.4 GB seen on 8xH200; about 8 GB per rank with 5 nodes and 12 communicators)");
    if (!capabilityKnown) {
      evidence.add("NVML did not report the compute capability: NVLS may not apply to these GPUs (it needs 9.0+ and NVSwitch)");
    }
    return List.of(Finding.of("nvls-headroom", Severity.WARNING, String.join(", ", short_),
        String.join(", ", short_) + " ha" + (short_.size() == 1 ? "s" : "ve") + " less than "
            + Bytes.human(NcclFacts.NVLS_GPU_BYTES_PER_RANK) + " of GPU memory free: a communicator set up now with NVLS"
            + " (on by default since NCCL 2.17) can run out, and NCCL 2.19 then hangs",
        evidence,
        List.of("NCCL_NVLS_ENABLE=0 in the job's environment frees it (NVLS speeds up all-reduce on NVSwitch systems)",
            "or leave about 1.5 GB per GPU free: a smaller model, batch, or memory fraction (vLLM: --gpu-memory-utilization)",
            "or NCCL 2.21 or later, which uses less")));
  }
}
