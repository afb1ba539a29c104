package org.shmguard.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import org.shmguard.host.HostPaths;
import org.shmguard.host.KeptFile;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.nativ.SmallFiles;
import org.shmguard.text.Counts;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.RememberedHolders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder history kept across a restart or an upgrade: {@code holders.json} in the state
 * directory (systemd's {@code StateDirectory=shmguard}, /var/lib/shmguard). Written after each
 * pass whose history changed, on a thread of its own, as every file root makes ({@link KeptFile}:
 * a root-owned directory handle, an exclusive temporary file, mode 0600, renamed over the name);
 * read once at start through the same kind of handle, without following a link or waiting on a
 * FIFO. The file ({@link HolderStateFormat}) names the boot and the PID namespace it was written
 * in and ends with a SHA-256 of its text: a file from another boot, another PID namespace, another format, or one that is
 * truncated, edited, too large, not root's or writable by others is ignored with a warning, and
 * every file then waits out its grace as on a first start. Nothing in it is trusted beyond what
 * {@link RememberedHolders#admit} checks against the host.
 *
 * <pre>{@code
 * HolderState state = HolderState.at(Path.of("/var/lib/shmguard"), HostPaths.system());
 * engine.remember(state.load());
 * state.keep(pass.judgement().snapshot(), engine.history());   // after each pass
 * }</pre>
 */
final class HolderState implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HolderState.class);
  static final String FILE = "holders.json";
  static final int MAX_BYTES = HolderStateFormat.MAX_BYTES;
  /** None: no state directory was given, nothing is kept. */
  static final HolderState NONE = new HolderState(null, null, null);

  private final Path dir;
  private final HolderStateFormat format;
  private final KeptFile file;

  private HolderState(Path dir, HolderStateFormat format, KeptFile file) {
    this.dir = dir;
    this.format = format;
    this.file = file;
  }

  /**
   * The history kept in {@code dir} (null: none), for the boot and PID namespace that
   * {@code paths}' /proc shows. Without a boot id to tell this boot from the next, nothing is kept.
   */
  static HolderState at(Path dir, HostPaths paths) {
    if (dir == null) {
      LOG.info("no state directory (--state-dir, or systemd's StateDirectory=): the holder history is not kept across"
          + " a restart");
      return NONE;
    }
    try {
      String boot = Files.readString(paths.proc("sys", "kernel", "random", "boot_id")).strip();
      String pidNs = Files.readSymbolicLink(paths.proc("self", "ns", "pid")).toString();
      return new HolderState(dir.toAbsolutePath(), new HolderStateFormat(boot, pidNs),
          KeptFile.start(dir.toAbsolutePath().resolve(FILE), 0600, true, "the holder history"));
    } catch (IOException | RuntimeException e) {
      LOG.warn("cannot tell this boot and PID namespace ({}): the holder history is not kept across a restart", e.toString());
      return NONE;
    }
  }

  /** How the file is written and read, for this boot and PID namespace; null when nothing is kept. */
  HolderStateFormat format() {
    return format;
  }

  /** The path of the file, or null when nothing is kept. */
  Path path() {
    return file == null ? null : file.path();
  }

  /** What the daemon before this one remembered; none (with a warning saying why) when the file cannot be trusted. */
  RememberedHolders load() {
    if (file == null) {
      return RememberedHolders.none();
    }
    byte[] bytes;
    try (RootDirectory d = RootDirectory.open(dir, false)) {
      SmallFiles.Contents c = d.readFile(FILE, MAX_BYTES);
      if (c.ownerUid() != SmallFiles.effectiveUid() || (c.permissions() & 022) != 0) {
        return ignored("owned by uid " + c.ownerUid() + " with mode " + String.format("%04o", c.permissions())
            + "; only a file of shmguard's own user that no one else can write is read");
      }
      if (c.bytes().length > MAX_BYTES) {
        return ignored("larger than " + MAX_BYTES + " bytes");
      }
      bytes = c.bytes();
    } catch (NoSuchFileException e) {
      LOG.info("no holder history in {} (a first start, or the last one kept none)", dir);
      return RememberedHolders.none();
    } catch (IOException e) {
      return ignored(e.getMessage());
    }
    try {
      RememberedHolders r = format.decode(bytes);
      LOG.info("holder history from before the restart: {} with {}, from {}", Counts.of(r.entries().size(), "segment"),
          Counts.of(r.entries().stream().mapToInt(e -> e.holders().size()).sum(), "holder"), file.path());
      return r;
    } catch (HolderStateFormat.Foreign e) {
      LOG.info("the holder history {} is not this one's ({}); starting without it", file.path(), e.getMessage());
      return RememberedHolders.none();
    } catch (IllegalArgumentException | IOException e) {
      return ignored(e.getMessage());
    }
  }

  private RememberedHolders ignored(String why) {
    LOG.warn("ignoring the holder history {}: {}; segments seen held before the restart wait out their grace", file.path(), why);
    return RememberedHolders.none();
  }

  /** Keeps what {@code history} knows of {@code snap}'s segments; the file is written on its own thread. */
  void keep(Snapshot snap, HolderHistory history) {
    if (file != null) {
      file.replace(() -> format.encode(RememberedHolders.from(snap, history, RememberedHolders.MAX_HOLDERS)));
    }
  }

  /** Waits a moment for the last write, so that a stop keeps the newest history. */
  @Override
  public void close() {
    if (file != null && !file.closeWithin(Duration.ofSeconds(2))) {
      LOG.warn("the holder history {} was not written within 2 s of the stop; the one before is kept", file.path());
    }
  }

}
