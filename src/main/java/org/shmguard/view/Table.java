package org.shmguard.view;

import java.util.ArrayList;
import java.util.List;

/** A plain text table with left-aligned columns separated by two spaces. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();
  private final int columns;

  Table(String... header) {
    columns = header.length;
    rows.add(header);
  }

  Table row(Object... cells) {
    String[] r = new String[columns];
    for (int i = 0; i < columns; i++) {
      r[i] = i < cells.length && cells[i] != null ? cells[i].toString() : "-";
    }
    rows.add(r);
    return this;
  }

  boolean isEmpty() {
    return rows.size() == 1;
  }

  String render() {
    int[] width = new int[columns];
    for (String[] r : rows) {
      for (int i = 0; i < columns; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(r[i]);
        if (i < columns - 1) {
          line.append(" ".repeat(width[i] - r[i].length() + 2));
        }
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
    return sb.toString();
  }
}
