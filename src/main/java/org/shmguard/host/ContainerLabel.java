package org.shmguard.host;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names the container, pod or batch job a process runs in, from its cgroup path:
 * {@code pod:<uid>} for Kubernetes, {@code docker:<id12>}, {@code containerd:<id12>},
 * {@code crio:<id12>}, {@code podman:<id12>}, {@code slurm-job:<n>}; null when the path says none.
 */
public final class ContainerLabel {
  private static final Pattern POD = Pattern.compile("pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12})");
  private static final Pattern RUNTIME = Pattern.compile("(docker|cri-containerd|crio|libpod)[-/]([0-9a-f]{64})");
  private static final Pattern SLURM = Pattern.compile("/job_([0-9]+)(?:/|$)");

  private ContainerLabel() {}

  /** The label for the text of /proc/PID/cgroup (v1 or v2), or null. */
  public static String fromCgroupFile(String text) {
    if (text == null) {
      return null;
    }
    String best = null;
    for (String line : text.split("\n")) {
      int second = line.indexOf(':', line.indexOf(':') + 1);
      if (second < 0) {
        continue;
      }
      String label = fromPath(line.substring(second + 1));
      if (label != null && (best == null || label.length() > best.length())) {
        best = label;
      }
    }
    return best;
  }

  /** The label for one cgroup path, or null. */
  public static String fromPath(String path) {
    Matcher pod = POD.matcher(path);
    if (pod.find()) {
      return "pod:" + pod.group(1).replace('_', '-');
    }
    Matcher rt = RUNTIME.matcher(path);
    if (rt.find()) {
      String runtime = switch (rt.group(1)) {
        case "cri-containerd" -> "containerd";
        case "libpod" -> "podman";
        default -> rt.group(1);
      };
      return runtime + ":" + rt.group(2).substring(0, 12);
    }
    Matcher job = SLURM.matcher(path);
    if (job.find()) {
      return "slurm-job:" + job.group(1);
    }
    return null;
  }
}
