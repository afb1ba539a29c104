package org.shmguard.policy.family;

import java.util.regex.Pattern;

/**
 * SGLang's segments: {@code sgl_shm_<kind>_<pid>_<8 hex>} (python/sglang/srt/utils/stale_shm_cleanup.py,
 * make_shm_name: the creator's os.getpid() and uuid4().hex[:8]; kinds seen: mm, mq, xputensor).
 * A producer often closes its segment and hands it to a consumer that unlinks it, so holders
 * having exited proves nothing. SGLang's own CI sweep unlinks one whose creator pid is dead
 * (the pid is the second-last "_" field); shmguard does the same only when nobody holds the
 * file, the pid is provably dead, and the grace has passed.
 */
public final class SglangFamily extends CreatorNamed {
  /** Greedy kind: the pid is the second-last field, as SGLang's own parser reads it. */
  private static final Pattern NAME = Pattern.compile("sgl_shm_.+_([0-9]{1,10})_[0-9a-f]{8}");

  public SglangFamily() {
    super(NAME);
  }

  @Override
  public String name() {
    return "sglang";
  }

  @Override
  public String producer() {
    return "SGLang (multimodal features, message queues)";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("sgl_shm_");
  }

  @Override
  public String pattern() {
    return "sgl_shm_*";
  }

  @Override
  public String source() {
    return "sgl-project/sglang python/sglang/srt/utils/stale_shm_cleanup.py (make_shm_name, _creator_pid)";
  }
}
