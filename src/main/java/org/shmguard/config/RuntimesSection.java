package org.shmguard.config;

import org.shmguard.host.RuntimeRoots;

/**
 * {@code runtimes}: where kubelet, Docker, podman and CRI-O keep the shm tmpfs they mount on the
 * host for pods and containers, which {@code mounts: [auto]} watches whether or not any process of
 * theirs runs. "" (or an empty list) leaves that runtime out.
 */
final class RuntimesSection extends ConfigSection<RuntimeRoots> {
  RuntimesSection() {
    super("runtimes");
    key("kubeletRoot", PathTypes.optionalPath());
    key("podLogs", PathTypes.optionalPath());
    key("dockerRoot", PathTypes.optionalPath());
    key("containerStorage", Types.paths());
  }

  @Override
  RuntimeRoots read(Values v) {
    return new RuntimeRoots(v.get("kubeletRoot"), v.get("podLogs"), v.get("dockerRoot"), v.get("containerStorage"));
  }
}
