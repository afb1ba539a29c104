package org.shmguard.advice;

import java.util.Objects;
import org.shmguard.model.Dev;
import org.shmguard.policy.Advice;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.JobShape;
import org.shmguard.policy.MountSpace;
import org.shmguard.gpu.NcclVersion;

/**
 * One ADVISE request, the one place its grammar lives in Java: {@link #line} writes it (for
 * {@code shmguard advise}), {@link #of(Request)} reads it (for the daemon), and {@link #answer}
 * is the one path from a mount's room and a job's shape to the advice and its text, whether the
 * daemon answers a client, rewrites the advice file, or the command works it out without a daemon.
 *
 * <pre>{@code
 * AdviseRequest q = new AdviseRequest(new JobShape(4, NcclVersion.parse("2.21.5")), Dev.of(0, 25), "env");
 * String line = q.line(true);          // "ADVISE v1 ranks=4 nccl=2.21.5 dev=0:25 format=env"
 * AdviseRequest back = AdviseRequest.of(Request.parse(line));
 * }</pre>
 *
 * @param dev the tmpfs the caller sees as /dev/shm; null for the daemon's own
 * @param format env or json
 */
public record AdviseRequest(JobShape shape, Dev dev, String format) {
  /** What the advice file holds: the daemon's own /dev/shm, nothing known of the job, as env. */
  public static final AdviseRequest HOST_DEFAULT = new AdviseRequest(JobShape.unknown(), null, "env");

  public AdviseRequest {
    Objects.requireNonNull(shape, "shape");
    if (!"env".equals(format) && !"json".equals(format)) {
      throw new IllegalArgumentException("format must be env or json, not \"" + Request.clip(String.valueOf(format)) + "\"");
    }
  }

  /** The advice and the text a caller is given, in this request's format. */
  public record Answer(Advice advice, String text) {}

  /** The one way to advise: {@code engine} on {@code space} for this request's job and format. */
  public Answer answer(AdviceEngine engine, MountSpace space, HostGpus gpus) {
    Advice a = engine.advise(space, shape, gpus);
    return new Answer(a, format.equals("json") ? AdviceFormat.json(a) : AdviceFormat.env(a));
  }

  /**
   * The request line: the keys of the protocol's first version (ranks, nccl, dev, format), and
   * with {@code laterKeys} those added since (nodes, p2p, procs, numa), which an older daemon refuses.
   */
  public String line(boolean laterKeys) {
    StringBuilder req = new StringBuilder("ADVISE ").append(Request.VERSION);
    if (shape.localRanks() != null) {
      req.append(" ranks=").append(shape.localRanks());
    }
    if (shape.nccl() != null) {
      req.append(" nccl=").append(shape.nccl());
    }
    if (dev != null) {
      req.append(" dev=").append(dev);
    }
    if (laterKeys && shape.nodes() != null) {
      req.append(" nodes=").append(shape.nodes());
    }
    if (laterKeys && shape.p2p() != null) {
      req.append(" p2p=").append(shape.p2p() ? "yes" : "no");
    }
    if (laterKeys && shape.processes() != null) {
      req.append(" procs=").append(shape.processes());
    }
    if (laterKeys && shape.numa() != null) {
      req.append(" numa=").append(shape.numa() ? "yes" : "no");
    }
    return req.append(" format=").append(format).toString();
  }

  /** Reads a parsed ADVISE request; every key optional. The dev is left to the responder, which knows the mounts. */
  public static AdviseRequest of(Request req) throws ProtocolException {
    String format = req.args().getOrDefault("format", "env");
    if (!format.equals("env") && !format.equals("json")) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "format must be env or json, not \"" + Request.clip(format) + "\"");
    }
    return new AdviseRequest(shape(req), null, format);
  }

  /** The job a request describes; every key optional (ranks, nccl, nodes, p2p, procs, numa). */
  static JobShape shape(Request req) throws ProtocolException {
    try {
      String nccl = req.arg("nccl");
      return new JobShape(count(req, "ranks", JobShape.MAX_RANKS), nccl == null ? null : NcclVersion.parse(nccl),
          count(req, "nodes", JobShape.MAX_NODES), yesNo(req, "p2p"), count(req, "procs", JobShape.MAX_RANKS),
          yesNo(req, "numa"));
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, e.getMessage());
    }
  }

  private static Integer count(Request req, String key, int max) throws ProtocolException {
    String v = req.arg(key);
    if (v == null) {
      return null;
    }
    if (!v.matches("[0-9]{1,9}") || Integer.parseInt(v) < 1 || Integer.parseInt(v) > max) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, key + " must be a whole number from 1 to " + max
          + ", not \"" + Request.clip(v) + "\"");
    }
    return Integer.valueOf(v);
  }

  private static Boolean yesNo(Request req, String key) throws ProtocolException {
    String v = req.arg(key);
    if (v == null) {
      return null;
    }
    return switch (v) {
      case "yes" -> Boolean.TRUE;
      case "no" -> Boolean.FALSE;
      default -> throw new ProtocolException(ProtocolException.BAD_REQUEST, key + " must be yes or no, not \""
          + Request.clip(v) + "\"");
    };
  }
}
