package org.shmguard.cli;

import org.shmguard.view.Json;

/** JSON for programs: one document, indented, nulls left out ({@link Json}, which the daemon's SCAN answer uses too). */
final class Output {
  private Output() {}

  static String json(Object value) {
    return Json.write(value);
  }
}
