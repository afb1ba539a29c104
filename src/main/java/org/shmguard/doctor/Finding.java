package org.shmguard.doctor;

import java.util.List;
import java.util.Objects;

/**
 * One thing the doctor found, with what it saw and what to do. {@code id} names the kind of
 * finding (stable, for programs: "shm-too-small", "logind-removeipc"); {@code subject} names what
 * it is about (a mount, a GPU, a file), or null when it is about the whole host.
 *
 * <pre>{@code
 * Finding f = Finding.of("shm-too-small", Severity.ERROR, "docker:1a2b3c:/dev/shm",
 *     "docker:1a2b3c:/dev/shm is 64M; 4 NCCL ranks need at least 74M",
 *     List.of("size 64M (statvfs)"), List.of("docker run --shm-size=1g ..."));
 * }</pre>
 */
public record Finding(String id, Severity severity, String subject, String summary, List<String> evidence, List<String> fix) {
  public Finding {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("id is required");
    }
    Objects.requireNonNull(severity, "severity");
    if (summary == null || summary.isBlank()) {
      throw new IllegalArgumentException("summary is required");
    }
    evidence = List.copyOf(evidence == null ? List.of() : evidence);
    fix = List.copyOf(fix == null ? List.of() : fix);
  }

  public static Finding of(String id, Severity severity, String subject, String summary, List<String> evidence, List<String> fix) {
    return new Finding(id, severity, subject, summary, evidence, fix);
  }
}
