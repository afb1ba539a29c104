package org.shmguard.advice;

import java.util.function.Supplier;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.MountSpace;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Judgement;

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

  public AdviceResponder(Supplier<Judgement> view, Supplier<HostGpus> gpus, AdviceEngine engine, HostActions actions) {
    this.view = view;
    this.gpus = gpus;
    this.engine = engine;
    this.actions = actions;
  }

  /** The whole reply: "OK v1" and the body, each line ending in a newline. */
  public String respond(Request req, Peer peer) throws ProtocolException {
    if (req.verb().rootOnly() && !peer.root()) {
      String what = req.verb() + (req.verb().changesHost() ? " changes the host" : " shows every user's processes");
      if (peer.notHostRoot() != null) {
        throw new ProtocolException(ProtocolException.DENIED, what + " and needs root of the host; this peer is uid 0 but "
            + peer.notHostRoot() + ", and may ask ADVISE, CHECK and PING");
      }
      throw new ProtocolException(ProtocolException.DENIED, what + " and only root may ask it; " + peer.user()
          + " may ask ADVISE, CHECK and PING");
    }
    return switch (req.verb()) {
      case PING -> ok("pong\n");
      case ADVISE -> ok(answer(req, peer));
      case CHECK -> ok(check());
      case SCAN -> ok(scan(req));
      case REMOUNT -> ok(actions.remount(mount(req.arg("dev")), size(req.arg("size"))) + "\n");
      case CLEAN -> ok(actions.clean(bool(req.arg("dry-run"))) + "\n");
      case PREPARE -> ok(actions.prepare(PrepareAnswer.start(req, gpus.get())) + "\n");
      case RELOAD -> ok(actions.reload() + "\n");
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

  /** Tells {@code listener} the action of every answer given over the socket, and its mount (metrics count them). */
  public AdviceResponder reportAnswersTo(java.util.function.BiConsumer<String, ShmMount> listener) {
    this.answered = listener;
    return this;
  }

  /** An answer to a client: the advice, reported to the listener. */
  private String answer(Request req, Peer peer) throws ProtocolException {
    AdviseRequest q = AdviseRequest.of(req);
    ShmMount m = req.arg("dev") != null ? mount(req.arg("dev")) : shmOf(peer);
    AdviseRequest.Answer a = advised(q, m);
    answered.accept(a.advice().action().label(), m);
    return a.text();
  }

  /** The advice for the request's mount ({@code q.dev()}, or the host's /dev/shm) and job, in its format. */
  public String advise(AdviseRequest q) throws ProtocolException {
    return advised(q, mount(q.dev() == null ? null : q.dev().toString())).text();
  }

  private AdviseRequest.Answer advised(AdviseRequest q, ShmMount m) throws ProtocolException {
    return q.answer(engine, space(m, judgement()), gpus.get());
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

  /**
   * The /dev/shm the asking process sees, for an ADVISE that names no device: the watched tmpfs
   * that the last pass found at /dev/shm in the peer's mount namespace (a container's own, the
   * tmpfs a pod's containers share, the host's). Never another namespace's in its place.
   */
  ShmMount shmOf(Peer peer) throws ProtocolException {
    Judgement j = judgement();
    if (peer.mountNamespace() < 0) {
      throw new ProtocolException(ProtocolException.UNKNOWN_MOUNT, "shmguard cannot tell which /dev/shm this client "
          + "sees (its process is outside shmguard's PID namespace, or gone); " + SEND_DEV);
    }
    ShmMount m = j.snapshot().shmOf(peer.mountNamespace());
    if (m == null) {
      throw new ProtocolException(ProtocolException.UNKNOWN_MOUNT, "the last pass watched no /dev/shm of this client's "
          + "mount namespace, mnt:[" + peer.mountNamespace() + "] (one started since, another user's beyond the "
          + "report limit, or not a tmpfs); " + SEND_DEV);
    }
    return m;
  }

  private static final String SEND_DEV = "send dev=MAJ:MIN, as mountpoint -d /dev/shm prints it";

  /** The mount a request names by its device, or the host's /dev/shm when it names none (root's REMOUNT). */
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
