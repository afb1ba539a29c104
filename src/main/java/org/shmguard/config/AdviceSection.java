package org.shmguard.config;

import java.nio.file.Path;
import java.time.Duration;

/** {@code advice}: the socket, advice.env, the advice engine's defaults and the socket's limits. */
final class AdviceSection extends ConfigSection<Config.Advice> {
  AdviceSection() {
    super("advice");
    key("enabled", Types.bool());
    key("socket", PathTypes.socketPath());
    key("envFile", PathTypes.absolutePath());
    key("defaultLocalRanks", Types.integer(1, 1024));
    key("maxClients", Types.integer(1, 1024));
    key("maxClientsPerUser", Types.integer(1, 1024));
    key("rootClients", Types.integer(1, 1024));
    key("idleTimeout", Types.duration(Duration.ofMillis(100), Duration.ofMinutes(1)));
    key("requestTimeout", Types.duration(Duration.ofMillis(100), Duration.ofMinutes(1)));
    key("requestBurst", Types.integer(1, 100_000));
    key("requestsPerSecond", Types.integer(1, 100_000));
  }

  @Override
  Config.Advice read(Values v) {
    return new Config.Advice(v.get("enabled"), Path.of(v.<String>get("socket")), Path.of(v.<String>get("envFile")),
        v.get("defaultLocalRanks"), v.get("maxClients"), v.get("maxClientsPerUser"), v.get("rootClients"),
        v.get("idleTimeout"), v.get("requestTimeout"), v.get("requestBurst"), v.get("requestsPerSecond"));
  }

  /** The socket and the advice file are files root creates and replaces: one must not clobber the other. */
  @Override
  void check(Values v) throws ConfigException {
    if (v.get("envFile").equals(v.get("socket"))) {
      throw v.broken("advice.envFile", "advice.socket", "is the same path as advice.socket; allowed: a path of its own");
    }
  }
}
