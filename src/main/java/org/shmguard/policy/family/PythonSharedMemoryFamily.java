package org.shmguard.policy.family;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Python's {@code multiprocessing.shared_memory}: {@code psm_} and 8 hex digits (Lib/multiprocessing/
 * shared_memory.py: prefix "/psm_", secrets.token_hex of (14 - 5) // 2 = 4 bytes). vLLM's and
 * SGLang's message queues use it. The creating object keeps an fd and a mapping; whoever calls
 * unlink() removes it; the resource tracker (Lib/multiprocessing/resource_tracker.py) unlinks what
 * is still registered when every process that uses it has exited, and leaks it when it is
 * SIGKILLed itself. A creator may close its object and exit while the segment is meant to live on
 * for another process to attach by name, so holders having exited proves nothing: only the
 * grace applies, and such files are reported, not reaped, unless the configuration says so.
 */
public final class PythonSharedMemoryFamily implements SegmentFamily {
  private static final Pattern NAME = Pattern.compile("psm_[0-9a-f]{8}");

  @Override
  public String name() {
    return "pythonShm";
  }

  @Override
  public String producer() {
    return "Python multiprocessing.shared_memory (vLLM and SGLang message queues)";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.length() == 12 && fileName.startsWith("psm_") && NAME.matcher(fileName).matches();
  }

  @Override
  public String pattern() {
    return "psm_*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "python-shared-memory";
  }

  @Override
  public boolean holdersExitedMeansLeaked() {
    return false;
  }

  @Override
  public Duration defaultGrace() {
    return Duration.ofMinutes(10);
  }

  @Override
  public boolean reapedByDefault() {
    return false;
  }

  @Override
  public String source() {
    return "python/cpython Lib/multiprocessing/shared_memory.py (_make_filename), Lib/multiprocessing/resource_tracker.py";
  }
}
