package org.shmguard.policy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What a launcher should do before starting an NCCL job on one shm mount, why, and the numbers
 * behind it. {@link #env()} holds only variables a launcher may export.
 *
 * @param numbers the figures the reason rests on, by name (bytes unless the name says otherwise)
 * @param assumptions what the engine had to assume because the request or the host did not say
 */
public record Advice(
    Action action,
    MountSpace mount,
    Map<String, String> env,
    String reason,
    Map<String, Long> numbers,
    List<String> assumptions) {

  /** The kinds of answer, from "nothing to do" to "the tmpfs must grow". */
  public enum Action {
    /** Everything NCCL will put in /dev/shm fits: set nothing. */
    NONE,
    /** The SHM buffers do not fit; NCCL and the driver can keep them in cuMem host memory instead. */
    CUMEM_HOST,
    /** The SHM buffers do not fit; turn the SHM transport off (slower intra-node traffic). */
    SHM_DISABLE,
    /** Not even what stays in /dev/shm with the SHM transport off fits: the tmpfs must grow. */
    GROW;

    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  public Advice {
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(mount, "mount");
    Objects.requireNonNull(reason, "reason");
    if (reason.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("reason must be one line: " + reason);
    }
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    numbers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(numbers));
    assumptions = List.copyOf(assumptions);
  }

  /** Bytes the tmpfs must grow by for this advice to work; 0 unless the action is GROW. */
  public long growBytes() {
    return numbers.getOrDefault("growBytes", 0L);
  }
}
