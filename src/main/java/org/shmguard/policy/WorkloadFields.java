package org.shmguard.policy;

import org.shmguard.alert.Alert;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Workload;

/**
 * The pod or container a mount belongs to ({@link ShmMount#workload()}), on every event about that
 * mount: its message ends with it in words ("[pod training/llama-0]") and it carries it as fields
 * (SHM_RUNTIME, SHM_POD_NAMESPACE, SHM_POD_NAME, SHM_POD_UID, SHM_POD_VOLUME, SHM_CONTAINER_ID,
 * SHM_CONTAINER_NAME; only those known). Applied by {@link HealthScope#tag}, which every event
 * about a mount passes through.
 *
 * <pre>{@code
 * Alert a = WorkloadFields.tag(alert, mount);   // unchanged when the mount has no workload
 * }</pre>
 */
public final class WorkloadFields {
  private WorkloadFields() {}

  public static Alert tag(Alert alert, ShmMount mount) {
    Workload w = mount == null ? null : mount.workload();
    if (w == null) {
      return alert;
    }
    return new Alert(alert.kind(), alert.message() + " [" + w.describe() + "]", alert.fields(), alert.priority())
        .with("SHM_RUNTIME", w.runtime())
        .with("SHM_POD_NAMESPACE", w.podNamespace())
        .with("SHM_POD_NAME", w.podName())
        .with("SHM_POD_UID", w.podUid())
        .with("SHM_POD_VOLUME", w.volume())
        .with("SHM_CONTAINER_ID", w.containerId())
        .with("SHM_CONTAINER_NAME", w.containerName());
  }
}
