package org.shmguard.advice;

import java.util.function.Supplier;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Advice;
import org.shmguard.policy.JobShape;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.MountSpace;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Judgement;
import org.shmguard.gpu.NcclVersion;

/**
 * Answers one parsed request: the protocol's meaning, apart from the socket that carries it.
 * Every answer comes from the latest judgement the daemon made, the free space of the asked-about
 * mount included (as that pass measured it): no request reads the host, so a flood of requests
 * costs no I/O (docs/advice.md, "How fresh an answer is").
 */
public final class AdviceResponder {
  private final Supplier<Judgement> view;
  private final Supplier<HostGpus> gpus;
  private final AdviceEngine engine;
  private final HostActions actions;
  private volatile java.util.function.BiConsumer<String, ShmMount> answered = (action, mount) -> { };
  private volatile HealthAnswer health;
  private volatile ScanAnswer scans;
  private volatile org.shmguard.remedy.ContainerShmSizer containers;

  public AdviceResponder(Supplier<Judgement> view, Supplier<HostGpus> gpus, AdviceEngine engine, HostActions actions) {
    this.view = view;
    this.gpus = gpus;
    this.engine = engine;
    this.actions = actions;
  }

  /** The whole reply: "OK v1" and the body, each line ending in a newline. */
  public String respond(Request req, Peer peer) throws ProtocolException {
    if (req.verb().rootOnly() && !peer.root()) {
      throw new ProtocolException(ProtocolException.DENIED, req.verb() + (req.verb().changesHost() ? " changes the host"
          : " shows every user's processes") + " and only root may ask it; " + peer.user() + " may ask ADVISE, CHECK and PING");
    }
    return switch (req.verb()) {
      case PING -> ok("pong\n");
      case ADVISE -> ok(answer(req));
      case CHECK -> ok(check());
      case SCAN -> ok(scan(req));
      case REMOUNT -> ok(actions.remount(mount(req.arg("dev")), size(req.arg("size"))) + "\n");
      case CLEAN -> ok(actions.clean(bool(req.arg("dry-run"))) + "\n");
      case PREPARE -> ok(PrepareAnswer.body(req, gpus.get(), containers));
    };
  }

  /** Answers CHECK from now on with {@code h}'s verdict on the latest judgement. */
  public AdviceResponder answerChecks(HealthAnswer h) {
    this.health = h;
    return this;
  }

  private String check() throws ProtocolException {
    HealthAnswer h = health;
    if (h == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server does not answer CHECK");
    }
    return h.body(view.get());
  }

  /** Answers root's PREPARE (a starting container's /dev/shm, from its OCI hook) from now on with {@code sizer}. */
  public AdviceResponder sizeContainers(org.shmguard.remedy.ContainerShmSizer sizer) {
    this.containers = sizer;
    return this;
  }

  /** Answers SCAN from now on with {@code s}'s rendering of the latest judgement. */
  public AdviceResponder answerScans(ScanAnswer s) {
    this.scans = s;
    return this;
  }

  private String scan(Request req) throws ProtocolException {
    ScanAnswer s = scans;
    if (s == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server does not answer SCAN");
    }
    return s.body(req, view.get());
  }

  /** Told the action of every answer given over the socket, and its mount. */
  public void onAnswer(java.util.function.BiConsumer<String, ShmMount> listener) {
    this.answered = listener;
  }

  /** An answer to a client: the advice, reported to the listener. */
  private String answer(Request req) throws ProtocolException {
    Advised a = advised(req);
    answered.accept(a.advice().action().label(), a.mount());
    return a.text();
  }

  /** The advice for the request's mount and shape, in its format. */
  public String advise(Request req) throws ProtocolException {
    return advised(req).text();
  }

  private record Advised(Advice advice, ShmMount mount, String text) {}

  private Advised advised(Request req) throws ProtocolException {
    String format = req.args().getOrDefault("format", "env");
    if (!format.equals("env") && !format.equals("json")) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "format must be env or json, not \"" + Request.clip(format) + "\"");
    }
    JobShape shape = shape(req);
    Judgement j = judgement();
    ShmMount m = mount(req.arg("dev"));
    Advice a = engine.advise(space(m, j), shape, gpus.get());
    return new Advised(a, m, format.equals("json") ? AdviceFormat.json(a) : AdviceFormat.env(a));
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

  /** The room in {@code m} as the judgement's pass measured it, with what it found leaked there. */
  MountSpace space(ShmMount m, Judgement j) throws ProtocolException {
    ShmMount.Usage u = m.usage();
    if (u == null) {
      throw new ProtocolException(ProtocolException.FAILED, "the last pass could not measure " + m.displayName() + "; ask again after the next one");
    }
    return MountSpace.of(m, u, j);
  }

  private Judgement judgement() throws ProtocolException {
    Judgement j = view.get();
    if (j == null) {
      throw new ProtocolException(ProtocolException.UNAVAILABLE, "shmguard has not finished its first pass yet; ask again in a moment");
    }
    return j;
  }

  /** The mount a request names by its device, or the host's /dev/shm when it names none. */
  ShmMount mount(String devText) throws ProtocolException {
    Judgement j = judgement();
    if (devText == null) {
      for (ShmMount m : j.snapshot().mounts()) {
        if (m.origin() == MountOrigin.HOST) {
          return m;
        }
      }
      for (ShmMount m : j.snapshot().mounts()) {
        if (m.origin() == MountOrigin.CONFIGURED && m.mountPoint().equals("/dev/shm")) {
          return m; // "mounts: [/dev/shm]" without auto
        }
      }
      throw new ProtocolException(ProtocolException.UNKNOWN_MOUNT, "shmguard watches no /dev/shm of its own namespace; send dev=MAJ:MIN");
    }
    Dev dev;
    try {
      dev = Dev.parseDecimal(devText);
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "dev must be MAJOR:MINOR in decimal, as mountpoint -d prints it");
    }
    ShmMount m = j.snapshot().mount(dev);
    if (m == null) {
      throw new ProtocolException(ProtocolException.UNKNOWN_MOUNT, dev + " is not a shm tmpfs shmguard watches");
    }
    return m;
  }

  private static Long size(String text) throws ProtocolException {
    if (text == null) {
      return null;
    }
    try {
      long v = Long.parseLong(text);
      if (v <= 0) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new ProtocolException(ProtocolException.BAD_REQUEST, "size must be a positive number of bytes");
    }
  }

  private static boolean bool(String text) throws ProtocolException {
    if (text == null || text.equals("false")) {
      return false;
    }
    if (text.equals("true")) {
      return true;
    }
    throw new ProtocolException(ProtocolException.BAD_REQUEST, "dry-run must be true or false");
  }

  private static String ok(String body) {
    return "OK " + Request.VERSION + "\n" + body;
  }
}
