package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.shmguard.config.Config;
import org.shmguard.nativ.Descriptors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The advice socket: a Unix stream socket speaking the line protocol of {@link Request}, one
 * request per connection. The peer's credentials (SO_PEERCRED) decide whether it gets a slot
 * (per user, with slots of root's own that no ordinary user can fill), whether it is within its
 * user's request rate ({@link RequestRate}: over it, "ERR v1 rate-limited" after a pause, with
 * nothing read or parsed first) and whether it may change the host. Each connection gets a
 * bounded line, an idle and a request deadline; a bad, oversized, silent, slow or surplus client
 * gets an "ERR v1" line and is closed, and the others carry on.
 *
 * <pre>{@code
 * try (AdviceServer s = AdviceServer.bind(Path.of("/run/shmguard/advice.sock"), responder, Limits.of(config.advice()))) {
 *   s.start();
 *   ...
 * }
 * }</pre>
 */
public final class AdviceServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(AdviceServer.class);
  private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration DRAIN_TIME = Duration.ofSeconds(1);
  private static final int SD_LISTEN_FDS_START = 3;
  private static final Duration REFUSAL_LOG_EVERY = Duration.ofSeconds(10);
  private static final int ACCEPT_BATCH = 64;

  /**
   * How much one client may send and how long it may take, and how many connections are served
   * at once: ordinary users share {@code maxClients}, at most {@code maxClientsPerUser} each, and
   * root has {@code rootClients} more of its own (see {@link ClientSlots}); each user (root
   * too) may make {@code burst} requests at once and {@code perSecond} a second on average (see
   * {@link RequestRate}).
   *
   * @param idleTimeout how long a connection may stay silent before its first byte
   * @param requestTimeout how long the whole request line may take
   */
  public record Limits(int maxLineBytes, Duration idleTimeout, Duration requestTimeout, int maxClients,
      int maxClientsPerUser, int rootClients, int burst, int perSecond) {
    public static final int MAX_LINE_BYTES = 1024;

    public Limits {
      if (maxLineBytes < 1 || idleTimeout.isNegative() || idleTimeout.isZero() || requestTimeout.isNegative()
          || requestTimeout.isZero() || burst < 1 || perSecond < 1) {
        throw new IllegalArgumentException("advice socket limits must be positive: line " + maxLineBytes + " bytes, idle "
            + idleTimeout + ", request " + requestTimeout + ", burst " + burst + ", rate " + perSecond);
      }
    }

    /** These caps and deadlines, with the shipped request rate. */
    public Limits(int maxLineBytes, Duration idleTimeout, Duration requestTimeout, int maxClients, int maxClientsPerUser,
        int rootClients) {
      this(maxLineBytes, idleTimeout, requestTimeout, maxClients, maxClientsPerUser, rootClients, RequestRate.BURST,
          RequestRate.PER_SECOND);
    }

    /** The configured limits. */
    public static Limits of(Config.Advice c) {
      return new Limits(MAX_LINE_BYTES, c.idleTimeout(), c.requestTimeout(), c.maxClients(), c.maxClientsPerUser(),
          c.rootClients(), c.requestBurst(), c.requestsPerSecond());
    }

    /** The same limits with another request rate (a test's, smaller than the shipped one). */
    public Limits withRate(int newBurst, int newPerSecond) {
      return new Limits(maxLineBytes, idleTimeout, requestTimeout, maxClients, maxClientsPerUser, rootClients, newBurst,
          newPerSecond);
    }

    /** {@code maxClients} for anyone, root included, each with {@code requestTimeout} for everything. */
    public static Limits of(Duration requestTimeout, int maxClients) {
      return new Limits(MAX_LINE_BYTES, requestTimeout, requestTimeout, maxClients, maxClients, 0);
    }
  }

  private final ServerSocketChannel server;
  private final Path path;
  /** The socket file this bound, null for systemd's socket. */
  private final SocketFile ownFile;
  private final AdviceResponder responder;
  private final Limits limits;
  private final ClientSlots slots;
  /** Used by the acceptor thread alone. */
  private final RequestRate rate;
  private final ExecutorService workers;
  /** Used by the acceptor thread alone. */
  private final PeerCheck peers;
  private Thread acceptor;
  private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
  /** The acceptor's selector, once it runs: close() wakes it. */
  private volatile Selector acceptSelector;
  private long lastRefusalLog = System.nanoTime() - REFUSAL_LOG_EVERY.toNanos();
  private int refusedSinceLog;
  private long lastDeniedLog = System.nanoTime() - REFUSAL_LOG_EVERY.toNanos();
  private int deniedSinceLog;
  private long lastLimitLog = System.nanoTime() - REFUSAL_LOG_EVERY.toNanos();
  private int limitedSinceLog;
  /** A user whose stretch of rate refusals began after the last such line. */
  private String unloggedLimit;

  private AdviceServer(ServerSocketChannel server, Path path, SocketFile ownFile, AdviceResponder responder, Limits limits)
      throws IOException {
    this.server = server;
    this.path = path;
    this.ownFile = ownFile;
    this.responder = responder;
    this.limits = limits;
    this.slots = new ClientSlots(limits.maxClients(), limits.maxClientsPerUser(), limits.rootClients());
    this.rate = new RequestRate(limits.burst(), limits.perSecond());
    AtomicInteger seq = new AtomicInteger();
    this.workers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "advice-client-" + seq.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    this.peers = PeerCheck.open();
  }

  /**
   * Listens at {@code path}, in a directory only root can change (see {@link SocketFile}). A
   * stale socket file (nobody answers on it) is replaced; a live one means another daemon runs,
   * and this fails saying so ({@link SocketInUseException}).
   */
  public static AdviceServer bind(Path path, AdviceResponder responder, Limits limits) throws IOException {
    SocketFile file;
    try {
      file = SocketFile.bind(path, 64);
    } catch (SocketInUseException e) {
      throw e; // names the path already, and the daemon must not start beside the other one
    } catch (IOException e) {
      throw new IOException("cannot listen on " + path + ": " + e.getMessage(), e);
    }
    return new AdviceServer(file.channel(), path, file, responder, limits);
  }

  /**
   * The listening socket systemd passed, or null when the process was not socket-activated. Both
   * ways systemd has work: the sd_listen_fds protocol (LISTEN_PID is this process, LISTEN_FDS
   * counts descriptors from 3; the first is moved to standard input, the one descriptor the JDK
   * adopts as a channel) and StandardInput=socket (or {@code systemd-socket-activate --inetd}).
   * Must run before anything else calls System.inheritedChannel(), which decides once.
   */
  public static AdviceServer inherited(AdviceResponder responder, Limits limits) throws IOException {
    String pid = System.getenv("LISTEN_PID");
    String fds = System.getenv("LISTEN_FDS");
    if (fds != null && pid != null && pid.equals(Long.toString(ProcessHandle.current().pid()))) {
      if (!fds.equals("1")) {
        LOG.warn("advice socket: systemd passed {} descriptors; using the first (fd 3)", fds);
      }
      Descriptors.dup2(SD_LISTEN_FDS_START, 0);
    }
    Channel ch = System.inheritedChannel();
    if (ch instanceof ServerSocketChannel server && server.getLocalAddress() instanceof UnixDomainSocketAddress u) {
      LOG.info("advice socket: using the listening socket systemd passed, {}", u.getPath());
      return new AdviceServer(server, u.getPath(), null, responder, limits);
    }
    if (fds != null) {
      LOG.warn("advice socket: LISTEN_FDS is set but no listening Unix socket came with it; listening on a socket of our own");
    }
    return null;
  }

  public Path path() {
    return path;
  }

  /** Starts accepting on a thread of its own. */
  public synchronized AdviceServer start() {
    acceptor = new Thread(this::acceptLoop, "advice-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    // The limits that decide who gets in; the timeouts and rates are advice.* in the configuration.
    LOG.info("advice socket listening on {} ({} clients, {} per user, {} more for root)", path, limits.maxClients(),
        limits.maxClientsPerUser(), limits.rootClients());
    return this;
  }

  /**
   * Accepts on a selector, so that the same thread lets refused connections linger briefly
   * ({@link Refusals}) and never waits on any client.
   */
  private void acceptLoop() {
    try (Selector selector = Selector.open()) {
      acceptSelector = selector;
      server.configureBlocking(false);
      SelectionKey accepting = server.register(selector, SelectionKey.OP_ACCEPT);
      Refusals refusals = new Refusals(selector);
      try {
        while (server.isOpen()) {
          // Only a held or lingering refusal has a deadline; with none, block until a client comes
          // (or close() wakes it), so an idle daemon's acceptor does not wake 10 times a second.
          selector.select(refusals.nextDeadlineMillis(System.nanoTime()));
          long now = System.nanoTime();
          for (SelectionKey key : selector.selectedKeys()) {
            if (key == accepting) {
              acceptReady(refusals, now);
            } else if (key.isValid()) {
              refusals.readable(key);
            }
          }
          selector.selectedKeys().clear();
          refusals.sweep(now);
        }
      } finally {
        refusals.closeAll();
      }
    } catch (ClosedChannelException | java.nio.channels.ClosedSelectorException e) {
      // closed: stop accepting
    } catch (IOException e) {
      if (server.isOpen()) {
        LOG.error("advice socket: stopped accepting: {}", e.getMessage());
      }
    }
  }

  /**
   * Accepts what is waiting, at most {@link #ACCEPT_BATCH} before the selector runs again: the
   * descriptors of refused connections closed meanwhile are freed only then (a channel registered
   * with a selector is closed when its key leaves the selector), and a client that connects as
   * fast as it can would otherwise keep this loop from ever returning.
   */
  private void acceptReady(Refusals refusals, long now) throws IOException {
    for (int i = 0; i < ACCEPT_BATCH; i++) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (ClosedChannelException e) {
        throw e;
      } catch (IOException e) {
        LOG.warn("advice socket: accept failed: {}", e.getMessage());
        return;
      }
      if (client == null) {
        return;
      }
      Peer peer = peer(client);
      // Before anything is read: a refusal must cost less than an answer.
      RequestRate.Taken token = rate.take(peer.rateKey(), now);
      if (!token.admitted()) {
        refusals.hold(client, peer.rateKey(), rateLimited(peer), now);
        logLimited(peer, token.startsStretch(), now);
        continue;
      }
      String refusal = slots.take(peer);
      if (refusal != null) {
        refusals.refuse(client, new ProtocolException(ProtocolException.BUSY, refusal).replyLine(), now);
        logRefusal(peer, refusal, now);
        continue;
      }
      try {
        workers.execute(() -> {
          try {
            serve(client, peer);
          } finally {
            slots.give(peer);
          }
        });
      } catch (RuntimeException e) {
        slots.give(peer);
        closeQuietly(client);
      }
    }
  }

  /**
   * One line per 10 s at most, with a count, for requests only root may make: any user may ask
   * CLEAN in a loop, and a line per request would fill the journal (past journald's rate limit for
   * the unit, shmguard's own alerts would be dropped). Called from the client threads.
   */
  private synchronized void logDenied(String line, Peer peer, String why) {
    deniedSinceLog++;
    long now = System.nanoTime();
    if (now - lastDeniedLog >= REFUSAL_LOG_EVERY.toNanos()) {
      LOG.warn("advice socket: refused \"{}\" from {}: {} ({} such requests refused since the last such line)", line,
          peer.who(), why, deniedSinceLog);
      lastDeniedLog = now;
      deniedSinceLog = 0;
    }
  }

  private String rateLimited(Peer peer) {
    return new ProtocolException(ProtocolException.RATE_LIMITED, peer.user() + " asked more than " + rate.burst()
        + " requests at once or " + limits.perSecond() + " a second; answered again once it asks less often").replyLine();
  }

  /**
   * A line when a user begins to be refused for its rate, at most one per 10 s for all users,
   * with how many requests were refused for it since the last such line; none per refusal.
   */
  private void logLimited(Peer peer, boolean startsStretch, long now) {
    limitedSinceLog++;
    if (startsStretch) {
      unloggedLimit = peer.rateKey();
    }
    if (unloggedLimit != null && now - lastLimitLog >= REFUSAL_LOG_EVERY.toNanos()) {
      LOG.warn("advice socket: {} asks more than {} requests at once or {} a second; its requests are refused"
          + " (rate-limited) until it asks less often ({} refused for the rate since the last such line)", unloggedLimit,
          rate.burst(), limits.perSecond(), limitedSinceLog);
      lastLimitLog = now;
      limitedSinceLog = 0;
      unloggedLimit = null;
    }
  }

  /** One line per 10 s at most: a client that connects in a loop must not flood the journal. */
  private void logRefusal(Peer peer, String why, long now) {
    refusedSinceLog++;
    if (now - lastRefusalLog >= REFUSAL_LOG_EVERY.toNanos()) {
      LOG.warn("advice socket: refused a connection of {}: {} ({} refused since the last such line)", peer.user(), why,
          refusedSinceLog);
      lastRefusalLog = now;
      refusedSinceLog = 0;
    }
  }

  private void serve(SocketChannel client, Peer peer) {
    try (ClientConnection c = new ClientConnection(client)) {
      String reply;
      String line = null;
      try {
        line = c.readLine(limits.maxLineBytes(), limits.idleTimeout(), limits.requestTimeout());
        reply = responder.respond(Request.parse(line), peer);
      } catch (ProtocolException e) {
        reply = e.replyLine() + "\n";
        if (e.code().equals(ProtocolException.DENIED)) {
          logDenied(line, peer, e.getMessage());
        } else {
          LOG.debug("advice socket: {} from {}: {}", e.code(), peer.user(), e.getMessage());
        }
      } catch (RuntimeException e) {
        LOG.error("advice socket: request \"{}\" from {} failed", line, peer.user(), e);
        reply = new ProtocolException(ProtocolException.FAILED, "internal error: " + e).replyLine() + "\n";
      }
      c.write(reply, WRITE_TIMEOUT);
      c.finish(DRAIN_TIME);
    } catch (IOException e) {
      LOG.debug("advice socket: client {} went away: {}", peer.user(), e.getMessage());
    }
  }

  private Peer peer(SocketChannel client) {
    return peers.of(client);
  }

  private static void closeQuietly(SocketChannel c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // nothing more to tell this client
    }
  }

  /** Stops accepting, lets running requests finish briefly, and removes the socket file it made. */
  @Override
  public void close() throws IOException {
    if (closed.getAndSet(true)) {
      return; // closed already: the socket file is gone, and may be another daemon's by now
    }
    server.close();
    Selector selector = acceptSelector;
    if (selector != null) {
      selector.wakeup(); // a select with no timeout does not notice the close by itself
    }
    workers.shutdown();
    try {
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    peers.close();
    if (ownFile != null) {
      ownFile.close();
    }
  }
}
