package org.shmguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packages under org.shmguard form a layered graph: no package depends, directly or through
 * others, on one that depends on it. Read from the sources (imports and qualified names, outside
 * comments and string literals), so a cycle fails the build with the files that make it. A
 * subpackage is a package of its own (org.shmguard.policy.family is "policy.family", not "policy"):
 * a cycle between a package and its subpackage is a cycle.
 */
class PackageCyclesTest {
  private static final Path SOURCES = Path.of("src/main/java/org/shmguard");
  private static final Pattern REFERENCE = Pattern.compile("\\borg\\.shmguard\\.([a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)*)\\.[A-Z*]");

  @Test
  void noPackageCycleAmongShmguardPackages() throws IOException {
    Map<String, Map<String, Set<String>>> graph = dependencies(SOURCES);
    assertThat(graph).as("packages found under %s", SOURCES).containsKeys("daemon", "policy", "alert");
    List<List<String>> cycles = cycles(graph);
    assertThat(cycles).as(describe(cycles, graph)).isEmpty();
  }

  @Test
  void cycleCheckFindsACycleThroughThreePackages() {
    Map<String, Map<String, Set<String>>> graph = new TreeMap<>();
    graph.put("a", Map.of("b", Set.of("a/A.java")));
    graph.put("b", Map.of("c", Set.of("b/B.java")));
    graph.put("c", Map.of("a", Set.of("c/C.java")));
    graph.put("d", Map.of("a", Set.of("d/D.java")));
    assertThat(cycles(graph)).containsExactly(List.of("a", "b", "c"));
  }

  @Test
  void aSubpackageIsAPackageOfItsOwn() {
    String code = "package org.shmguard.x.y;\nimport org.shmguard.x.X;\nimport org.shmguard.x.y.z.Z;\n"
        + "import static org.shmguard.w.W.f;\nclass Y { org.shmguard.x.y.Y self; }\n";
    assertThat(referencedPackages(code)).containsExactly("w", "x", "x.y.z");
  }

  @Test
  void aCycleBetweenAPackageAndItsSubpackageIsFound(@TempDir Path root) throws IOException {
    write(root.resolve("x/X.java"), "package org.shmguard.x;\nimport org.shmguard.x.y.Y;\nclass X { Y y; }\n");
    write(root.resolve("x/y/Y.java"), "package org.shmguard.x.y;\nimport org.shmguard.x.X;\nclass Y { X x; }\n");
    assertThat(cycles(dependencies(root))).containsExactly(List.of("x", "x.y"));
  }

  private static void write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }

  @Test
  void referencesInCommentsAndStringsAreNotDependencies() {
    String code = "package org.shmguard.x;\n// see org.shmguard.y.Y\n/* org.shmguard.z.Z */\n"
        + "class X { String s = \"org.shmguard.w.W\"; org.shmguard.v.V v; }\n";
    assertThat(referencedPackages(code)).containsExactly("v");
  }

  /** package -> package it uses -> the files (relative to the sources) that use it. */
  static Map<String, Map<String, Set<String>>> dependencies(Path root) throws IOException {
    Map<String, Map<String, Set<String>>> graph = new TreeMap<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        Path rel = root.relativize(f);
        String pkg = rel.getParent() == null ? "" : rel.getParent().toString().replace('/', '.');
        Map<String, Set<String>> uses = graph.computeIfAbsent(pkg, p -> new TreeMap<>());
        for (String used : referencedPackages(Files.readString(f))) {
          if (!used.equals(pkg)) {
            uses.computeIfAbsent(used, u -> new TreeSet<>()).add(rel.toString());
          }
        }
      }
    }
    return graph;
  }

  static Set<String> referencedPackages(String source) {
    Set<String> found = new TreeSet<>();
    Matcher m = REFERENCE.matcher(codeOnly(source));
    while (m.find()) {
      found.add(m.group(1));
    }
    found.remove(packageOf(source));
    return found;
  }

  private static String packageOf(String source) {
    Matcher m = Pattern.compile("^package org\\.shmguard\\.([a-z][a-z0-9_.]*)\\s*;", Pattern.MULTILINE).matcher(source);
    return m.find() ? m.group(1) : "";
  }

  /** The source with comments, string, text-block and char literals blanked out. */
  private static String codeOnly(String s) {
    StringBuilder out = new StringBuilder(s.length());
    int i = 0;
    while (i < s.length()) {
      if (s.startsWith("//", i)) {
        i = s.indexOf('\n', i) < 0 ? s.length() : s.indexOf('\n', i);
      } else if (s.startsWith("/*", i)) {
        int end = s.indexOf("*/", i + 2);
        i = end < 0 ? s.length() : end + 2;
        out.append(' ');
      } else if (s.startsWith("\"\"\"", i)) {
        int end = s.indexOf("\"\"\"", i + 3);
        i = end < 0 ? s.length() : end + 3;
        out.append("\"\"");
      } else if (s.charAt(i) == '"' || s.charAt(i) == '\'') {
        char q = s.charAt(i++);
        while (i < s.length() && s.charAt(i) != q) {
          i += s.charAt(i) == '\\' ? 2 : 1;
        }
        i++;
        out.append(q).append(q);
      } else {
        out.append(s.charAt(i++));
      }
    }
    return out.toString();
  }

  /** Every strongly connected component of more than one package (Tarjan), each sorted. */
  static List<List<String>> cycles(Map<String, Map<String, Set<String>>> graph) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<List<String>> found = new ArrayList<>();
    for (String v : graph.keySet()) {
      if (!index.containsKey(v)) {
        connect(v, graph, index, low, stack, onStack, found);
      }
    }
    return found;
  }

  private static void connect(String v, Map<String, Map<String, Set<String>>> graph, Map<String, Integer> index,
      Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<List<String>> found) {
    index.put(v, index.size());
    low.put(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (String w : graph.getOrDefault(v, Map.of()).keySet()) {
      if (!index.containsKey(w)) {
        connect(w, graph, index, low, stack, onStack, found);
        low.put(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.contains(w)) {
        low.put(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v).equals(index.get(v))) {
      List<String> component = new ArrayList<>();
      String w;
      do {
        w = stack.pop();
        onStack.remove(w);
        component.add(w);
      } while (!w.equals(v));
      if (component.size() > 1) {
        component.sort(null);
        found.add(component);
      }
    }
  }

  private static String describe(List<List<String>> cycles, Map<String, Map<String, Set<String>>> graph) {
    StringBuilder sb = new StringBuilder("package cycles:");
    for (List<String> c : cycles) {
      sb.append("\n  ").append(String.join(", ", c)).append(':');
      for (String from : c) {
        graph.getOrDefault(from, Map.of()).forEach((to, files) -> {
          if (c.contains(to)) {
            sb.append("\n    ").append(from).append(" -> ").append(to).append(" in ").append(files);
          }
        });
      }
    }
    return sb.toString();
  }
}
