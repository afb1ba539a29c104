package org.shmguard.advice;

import org.shmguard.model.ContainerStart;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.JobShape;

/**
 * Root's {@code PREPARE v1 container=ID pid=PID gpus=N|all [root=PATH]}: the OCI hook's request to
 * size a starting container's /dev/shm for its GPUs. Reads the request's words into a
 * {@link ContainerStart} ({@code all} is the host's GPU count, or {@link AdviceEngine#DEFAULT_LOCAL_RANKS}
 * when the host lists none; a count above {@link JobShape#MAX_RANKS} is sized as that many), which
 * root's {@link HostActions#prepare} sizes.
 */
final class PrepareAnswer {
  /** A larger count is read as this many (and sized as {@link JobShape#MAX_RANKS}). */
  private static final long MAX_COUNT = 1_000_000;
  private PrepareAnswer() {}

  static ContainerStart start(Request req, HostGpus host) throws ProtocolException {
    String id = required(req, "container");
    String pid = required(req, "pid");
    String gpus = required(req, "gpus");
    if (!pid.matches("[0-9]{1,9}")) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "pid must be a process id, not \"" + Request.clip(pid) + "\"");
    }
    int count;
    if (gpus.equals("all")) {
      count = host.gpuCount() > 0 ? host.gpuCount() : AdviceEngine.DEFAULT_LOCAL_RANKS;
    } else if (gpus.matches("[0-9]{1,12}")) {
      count = (int) Math.min(Long.parseLong(gpus), MAX_COUNT);
    } else {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "gpus must be a whole number or all, not \"" + Request.clip(gpus) + "\"");
    }
    try {
      return new ContainerStart(id, Integer.parseInt(pid), count, req.arg("root"));
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, e.getMessage());
    }
  }

  private static String required(Request req, String key) throws ProtocolException {
    String v = req.arg(key);
    if (v == null) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "PREPARE needs " + key + "=; send PREPARE v1 container=ID pid=PID gpus=N|all [root=PATH]");
    }
    return v;
  }
}
