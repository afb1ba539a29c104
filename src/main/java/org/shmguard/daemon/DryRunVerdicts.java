package org.shmguard.daemon;

import java.util.HashMap;
import java.util.Map;
import org.shmguard.model.FileKey;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Bytes;
import org.shmguard.text.Durations;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dry run shows every verdict with its reason, not only the leaks: one log line per file when
 * its verdict changes ("dry run: /dev/shm/nccl-x (9.2M, nccl, age 3s), verdict held: held by pid
 * 4242 (map)"), with the blockers on a leaked one.
 */
final class DryRunVerdicts implements org.shmguard.engine.Output {
  private static final Logger LOG = LoggerFactory.getLogger(DryRunVerdicts.class);
  /** Each examined file's last logged verdict: a verdict is logged when it changes. */
  private Map<FileKey, Verdict> loggedVerdicts = new HashMap<>();

  /** A dry run's pass is logged; any other report is not. */
  @Override
  public void export(org.shmguard.engine.PassReport report) {
    if (report.isPass() && report.dryRun()) {
      log(report.judgement());
    }
  }

  void log(Judgement j) {
    Map<FileKey, Verdict> now = new HashMap<>();
    for (Assessment a : j.segments()) {
      FileKey key = a.segment().key();
      now.put(key, a.verdict());
      if (loggedVerdicts.get(key) != a.verdict()) {
        String mount = a.mount() == null ? "?" : a.mount().displayName();
        String blockers = a.verdict().reapable() && !j.plan().blockers().isEmpty()
            ? "; not reaped: " + String.join("; ", j.plan().blockers()) : "";
        LOG.info("dry run: {}/{} ({}, {}, age {}), verdict {}: {}{}", mount, a.segment().displayName(),
            Bytes.human(a.segment().allocatedBytes()), a.kind(), Durations.human(a.age()), a.verdict().label(), a.reason(), blockers);
      }
    }
    loggedVerdicts = now;
  }
}
