package org.shmguard.config;

/** {@code metrics}: the Prometheus endpoint and the node_exporter textfile. */
final class MetricsSection extends ConfigSection<Config.Metrics> {
  MetricsSection() {
    super("metrics");
    key("listen", Types.listenAddress());
    key("textfile", PathTypes.optionalTextfile());
  }

  @Override
  Config.Metrics read(Values v) {
    return new Config.Metrics(v.get("listen"), v.get("textfile"));
  }

  /** The textfile is a file root creates and replaces: it must not be the advice socket or file. */
  @Override
  void check(Values v) throws ConfigException {
    String textfile = v.get("textfile");
    String socket = v.other("advice.socket");
    String envFile = v.other("advice.envFile");
    if (textfile.equals(socket) || textfile.equals(envFile)) {
      String other = textfile.equals(socket) ? "advice.socket" : "advice.envFile";
      throw v.broken("metrics.textfile", other, "is the same path as " + other + "; allowed: a path of its own");
    }
  }
}
