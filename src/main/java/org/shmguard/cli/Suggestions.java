package org.shmguard.cli;

import java.util.Collection;

/**
 * The closest known word to a typo, as git and systemctl offer it: "unknown command 'scna'; did
 * you mean 'scan'?". Close means at most two edits (an insertion, a deletion, a change, or two
 * neighbours swapped), and at most a third of the word (none for a word of one or two letters); none when nothing is
 * that close.
 *
 * <pre>{@code
 * Suggestions.closest("scna", List.of("scan", "clean")); // "scan"
 * }</pre>
 */
final class Suggestions {
  private Suggestions() {}

  /** The nearest of {@code known} to {@code typed}, or null when none is close enough to be what was meant. */
  static String closest(String typed, Collection<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(typed, k);
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    int letters = typed.replaceFirst("^-+", "").length();
    int allowed = letters <= 2 ? 0 : Math.min(2, Math.max(1, letters / 3));
    return bestDistance <= allowed ? best : null;
  }

  /** Edits from a to b, a swap of neighbours counting as one (optimal string alignment distance). */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
