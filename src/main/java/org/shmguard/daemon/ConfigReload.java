package org.shmguard.daemon;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigChanges;
import org.shmguard.config.ConfigException;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code systemctl reload shmguard} (SIGHUP): reads the configuration again, the main file and its
 * drop-ins, and applies it; or, when it is invalid, keeps the one running and says why. Between
 * RELOADING=1 and READY=1 to systemd; one journal event either way ({@code config_reloaded} with
 * the keys applied and those that wait for a restart, or {@code config_rejected} with the file,
 * line and key, written by the alert sink alone, so the journal has it once); a rejected reload stays in the status line until a reload succeeds. Which keys a
 * reload applies is {@link ConfigChanges}'s to say.
 *
 * <pre>{@code
 * ConfigReload reload = new ConfigReload(source, running, daemon, level -> ..., sink, notifier);
 * signals.attach(daemon::stop, reload::reload); // ServiceSignals: SIGHUP runs it
 * }</pre>
 */
final class ConfigReload {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigReload.class);
  /** How long a reload waits for a pass in progress before it reports the settings as pending. */
  private static final long APPLY_WAIT_SECONDS = 60;

  private final Service.ConfigSource source;
  private final Daemon daemon;
  private final Consumer<String> logLevel;
  private final AlertSink sink;
  private final ServiceNotifier notifier;
  private Config running;

  /**
   * @param logLevel sets log.level
   */
  ConfigReload(Service.ConfigSource source, Config running, Daemon daemon, Consumer<String> logLevel,
      AlertSink sink, ServiceNotifier notifier) {
    this.source = source;
    this.running = running;
    this.daemon = daemon;
    this.logLevel = logLevel;
    this.sink = sink;
    this.notifier = notifier;
  }

  /**
   * What a reload came to: {@code applied} and the journal's line for it, or not and why (the
   * rejection's file, line and key, or the failure).
   */
  record Verdict(boolean applied, String message) {}

  /** One reload, start to end; a second signal (or RELOAD) meanwhile waits for this one. */
  synchronized Verdict reload() {
    // Before the first pass systemd still waits for READY=1 from it: a reload then must not send one early.
    boolean tell = daemon.ready();
    if (tell) {
      notifier.reloading();
    }
    try {
      Config loaded;
      try {
        loaded = source.load();
      } catch (ConfigException e) {
        return new Verdict(false, rejected(e));
      }
      return apply(loaded);
    } catch (RuntimeException e) {
      String message = "the reload failed (" + e + "); the configuration before it stays in force where it was not yet applied";
      LOG.error("{}", message, e);
      return new Verdict(false, message);
    } finally {
      if (tell) {
        notifier.ready(daemon.statusLine());
      }
    }
  }

  private Verdict apply(Config loaded) {
    List<String> changed = ConfigChanges.between(running, loaded);
    List<String> applied = new ArrayList<>();
    List<String> waiting = new ArrayList<>();
    changed.forEach(k -> (ConfigChanges.needsRestart(k) ? waiting : applied).add(k));
    Config next = ConfigChanges.reloaded(running, loaded);
    String pending = "";
    try {
      daemon.reconfigure(next).get(APPLY_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      pending = "; a pass has run for over " + APPLY_WAIT_SECONDS + " s: the settings apply once it returns";
    } catch (ExecutionException e) {
      String message = "the reloaded configuration was not applied: " + e.getCause().getMessage();
      LOG.warn("{}", message);
      return new Verdict(false, message);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Verdict(false, "the reload was interrupted");
    }
    logLevel.accept(next.log().level());
    running = next;
    daemon.note(null);
    String message = "configuration reloaded from " + loaded.source() + ": "
        + (applied.isEmpty() ? "no change to apply" : "applied " + String.join(", ", applied) + " from the next pass")
        + (waiting.isEmpty() ? "" : "; " + String.join(", ", waiting) + " take effect at the next restart (systemctl restart shmguard)")
        + (next.reap().dryRun() ? "; dry run: nothing is reaped or remounted" : "") + pending;
    sink.emit(Alert.of(EventKind.CONFIG_RELOADED, message)
        .with("SHM_CONFIG", loaded.source())
        .with("SHM_CHANGED", applied.isEmpty() ? null : String.join(",", applied))
        .with("SHM_RESTART_NEEDED", waiting.isEmpty() ? null : String.join(",", waiting)));
    return new Verdict(true, message);
  }

  private String rejected(ConfigException e) {
    String message = "configuration reload rejected, running on with " + running.source() + ": "
        + String.join("; ", e.lines());
    sink.emit(Alert.of(EventKind.CONFIG_REJECTED, message)
        .with("SHM_CONFIG_FILE", e.source())
        .with("SHM_CONFIG_LINE", e.line() > 0 ? e.line() : null)
        .with("SHM_CONFIG_KEY", e.key()));
    daemon.note("; reload rejected (" + e.format() + "), running on the configuration before it");
    return message;
  }
}
