package org.shmguard.config;

/** {@code namespaces}: which mount namespaces shmguard acts in. */
final class NamespacesSection extends ConfigSection<Config.Namespaces> {
  NamespacesSection() {
    super("namespaces");
    key("actInUserNamespaces", Types.bool());
    key("reportLimit", Types.integer(0, 100_000)); // memory bound over users' namespaces
  }

  @Override
  Config.Namespaces read(Values v) {
    return new Config.Namespaces(v.get("actInUserNamespaces"), v.get("reportLimit"));
  }
}
