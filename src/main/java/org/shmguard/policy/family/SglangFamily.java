package org.shmguard.policy.family;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SGLang's segments: {@code sgl_shm_<kind>_<pid>_<8 hex>} (python/sglang/srt/utils/stale_shm_cleanup.py,
 * make_shm_name: the creator's os.getpid() and uuid4().hex[:8]; kinds seen: mm, mq, xputensor).
 * A producer often closes its segment and hands it to a consumer that unlinks it, so holders
 * having exited proves nothing. SGLang's own CI sweep unlinks one whose creator pid is dead
 * (the pid is the second-last "_" field); shmguard does the same only when nobody holds the
 * file, the pid is provably dead, and the grace has passed.
 */
public final class SglangFamily implements SegmentFamily {
  /** Greedy kind: the pid is the second-last field, as SGLang's own parser reads it. */
  private static final Pattern NAME = Pattern.compile("sgl_shm_.+_([0-9]{1,10})_[0-9a-f]{8}");

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
  public String kind(String fileName, long sizeBytes) {
    return "sglang";
  }

  @Override
  public boolean holdersExitedMeansLeaked() {
    return false;
  }

  @Override
  public OptionalInt creatorPid(String fileName) {
    Matcher m = NAME.matcher(fileName);
    return m.matches() ? SegmentFamily.pid(m.group(1)) : OptionalInt.empty();
  }

  @Override
  public Duration defaultGrace() {
    return Duration.ofMinutes(5);
  }

  @Override
  public boolean reapedByDefault() {
    return false;
  }

  @Override
  public String source() {
    return "sgl-project/sglang python/sglang/srt/utils/stale_shm_cleanup.py (make_shm_name, _creator_pid)";
  }
}
