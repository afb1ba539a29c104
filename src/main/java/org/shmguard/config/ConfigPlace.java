package org.shmguard.config;

/**
 * Where a key got its value: the file and line, and the file's place in the merge order (the
 * main file 0, its drop-ins 1, 2, ... in the order they are read; -1 for the built-in defaults).
 * A rule broken by two keys is reported at the one set last ({@link #later}): usually the one
 * just edited.
 */
record ConfigPlace(String source, int line, int rank) {
  static final int DEFAULTS = -1;

  static ConfigPlace defaults(String source) {
    return new ConfigPlace(source, 0, DEFAULTS);
  }

  /** The place set later in the merge order: a later file, or a later line of the same file. */
  static ConfigPlace later(ConfigPlace a, ConfigPlace b) {
    if (a.rank != b.rank) {
      return a.rank > b.rank ? a : b;
    }
    return a.line >= b.line ? a : b;
  }
}
