package org.shmguard.config;

/**
 * The bounds every configuration file is held to before and while it is parsed, so that no file
 * can make shmguard run out of memory or stack, wait forever, or read something other than what
 * the file says. Each limit is far above what a real configuration needs: the shipped file,
 * which sets every key and explains each, is about 6 KiB, 3 levels deep, and has short lists.
 */
final class ConfigLimits {
  /** Bytes a configuration file may hold; a larger one is refused before it is parsed. */
  static final int MAX_BYTES = 256 * 1024;

  /**
   * Mappings and lists nested inside one another. shmguard's keys go 3 deep (a section, a key,
   * a list of values); the slack lets a near-miss get the key's own message instead.
   */
  static final int MAX_DEPTH = 8;

  /** Items in one list (mounts, reap.patterns, reap.deny). */
  static final int MAX_LIST_ITEMS = 256;

  static final String ALLOWED_SIZE = "a file of at most " + MAX_BYTES + " bytes (256 KiB)";
  static final String ALLOWED_DEPTH = "at most " + MAX_DEPTH + " levels of nesting (shmguard's keys go 3 deep: section, key, list)";
  static final String ALLOWED_REFERENCES = "every value written out where it is used";
  static final String ALLOWED_TAGS = "plain values, without a YAML tag";
  static final String ALLOWED_DOCUMENTS = "one YAML document per file";
  static final String ALLOWED_FILE = "a regular file (or a link to one)";
  static final String ALLOWED_TEXT = "UTF-8 text without control characters other than tab and newline";

  private ConfigLimits() {}
}
