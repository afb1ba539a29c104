package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * packaging/doc/copyright (DEP-5) accounts for everything the packaged jar bundles: every file of
 * target/shmguard.jar that is not shmguard's own falls under a library's paragraph, and that
 * paragraph's License names every licence the library's own POM declares. A new dependency, or a
 * new version under another licence, fails here until the copyright file (and the RPM License)
 * says so.
 */
class BundledLicencesTest {
  private static final Path COPYRIGHT = Path.of("packaging/doc/copyright");
  private static final Path JAR = Path.of("target/shmguard.jar");

  /** The licence names of the bundled libraries' POMs, as DEP-5 short names. A new one must be checked and added. */
  private static final Map<String, String> POM_NAMES = Map.ofEntries(
      Map.entry("Apache-2.0", "Apache-2.0"),
      Map.entry("The Apache Software License, Version 2.0", "Apache-2.0"),
      Map.entry("The Apache Software License, version 2.0", "Apache-2.0"),
      Map.entry("Apache License, Version 2.0", "Apache-2.0"),
      Map.entry("LGPL-2.1-or-later", "LGPL-2.1+"),
      Map.entry("Eclipse Public License - v 2.0", "EPL-2.0"),
      Map.entry("Eclipse Public License - v 1.0", "EPL-1.0"),
      Map.entry("GNU General Public License Version 2", "GPL-2"),
      Map.entry("GNU Lesser General Public License Version 2.1", "LGPL-2.1"),
      Map.entry("GNU Lesser General Public License version 3", "LGPL-3"),
      // logback names no version; its URL is .../old-licenses/lgpl-2.1.html
      Map.entry("GNU Lesser General Public License", "LGPL-2.1"),
      Map.entry("BSD-3-Clause", "BSD-3-clause"),
      Map.entry("MIT License", "Expat"));

  /** The SPDX names of the DEP-5 short names, for the RPM's License field. */
  private static final Map<String, String> SPDX = Map.ofEntries(
      Map.entry("Apache-2.0", "Apache-2.0"), Map.entry("LGPL-2.1+", "LGPL-2.1-or-later"), Map.entry("EPL-2.0", "EPL-2.0"),
      Map.entry("EPL-1.0", "EPL-1.0"), Map.entry("GPL-2", "GPL-2.0-only"), Map.entry("LGPL-2.1", "LGPL-2.1-only"),
      Map.entry("LGPL-3", "LGPL-3.0-only"), Map.entry("BSD-3-clause", "BSD-3-Clause"), Map.entry("BSD-2-clause", "BSD-2-Clause"),
      Map.entry("BSL-1.0", "BSL-1.0"), Map.entry("Expat", "MIT"));

  record Paragraph(List<String> files, String license) {
    boolean matches(String path) {
      return files.stream().anyMatch(f -> glob(f).matcher(path).matches());
    }
  }

  @Test
  void everyFileTheJarBundlesFallsUnderALibrarysParagraph() throws IOException {
    assumeTrue(Files.exists(JAR), "no target/shmguard.jar: build it first with mvn -DskipTests package");
    List<Paragraph> paragraphs = filesParagraphs();
    Set<String> uncovered = new TreeSet<>();
    try (ZipFile jar = new ZipFile(JAR.toFile())) {
      for (ZipEntry e : Collections.list(jar.entries())) {
        String path = versionless(e.getName());
        if (e.isDirectory() || shmguardsOwn(path)) {
          continue;
        }
        Paragraph p = governing(paragraphs, path);
        if (p.files().equals(List.of("*"))) {
          uncovered.add(path.contains("/") ? path.substring(0, path.lastIndexOf('/') + 1) + "*" : path);
        }
      }
    }
    assertThat(uncovered).as("files in shmguard.jar that no library paragraph of " + COPYRIGHT
        + " covers (a new bundled library? add a paragraph with its copyright and licence)").isEmpty();
  }

  @Test
  void eachBundledLibrarysParagraphNamesTheLicencesItsPomDeclares() throws Exception {
    assumeTrue(Files.exists(JAR), "no target/shmguard.jar: build it first with mvn -DskipTests package");
    List<Paragraph> paragraphs = filesParagraphs();
    Map<String, String> problems = new LinkedHashMap<>();
    int checked = 0;
    try (ZipFile shaded = new ZipFile(JAR.toFile())) {
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        Path lib = Path.of(entry);
        if (!lib.toString().endsWith(".jar") || !Files.isRegularFile(lib)) {
          continue;
        }
        String sample = sampleClass(lib);
        if (sample == null || shaded.getEntry(sample) == null) {
          continue; // not bundled (a test library, or the JDK's)
        }
        checked++;
        Set<String> declared = new LinkedHashSet<>();
        for (String name : pomLicences(pomOf(lib))) {
          String shortName = POM_NAMES.get(name);
          if (shortName == null) {
            problems.put(lib.getFileName().toString(), "its POM names the licence \"" + name + "\": check it and map it in POM_NAMES");
          }
          declared.add(shortName);
        }
        Paragraph p = governing(paragraphs, sample);
        Set<String> named = licenceWords(p.license());
        if (p.files().equals(List.of("*")) || !named.containsAll(declared)) {
          problems.put(lib.getFileName().toString(), "declares " + declared + " but " + sample + " falls under \"Files: "
              + String.join(" ", p.files()) + "\" with License: " + p.license());
        }
      }
    }
    assertThat(checked).as("bundled libraries found on the class path").isGreaterThanOrEqualTo(20);
    assertThat(problems).isEmpty();
  }

  @Test
  void everyLicenceNamedHasItsTextAndTheRpmLicenseCoversThemAll() throws IOException {
    String text = Files.readString(COPYRIGHT);
    Set<String> used = new TreeSet<>();
    for (Paragraph p : filesParagraphs()) {
      used.addAll(licenceWords(p.license()));
    }
    Set<String> standalone = new TreeSet<>();
    for (String block : text.split("\n\n")) {
      if (block.startsWith("License: ")) {
        standalone.add(block.lines().findFirst().orElseThrow().substring("License: ".length()).trim());
      }
    }
    assertThat(standalone).as("a License paragraph with the text, or where Debian keeps it, for each name used").containsAll(used);

    String rpmLicense = Files.readString(Path.of("pom.xml")).lines().map(String::trim)
        .filter(l -> l.startsWith("<license>") && l.endsWith("</license>") && l.contains(" AND ")).findFirst().orElseThrow()
        .replaceAll("</?license>", "");
    Set<String> spdx = new TreeSet<>();
    for (String name : used) {
      spdx.add(SPDX.get(name));
    }
    Set<String> rpmNames = new TreeSet<>(List.of(rpmLicense.replaceAll("[()]", " ").trim().split("\\s+")));
    rpmNames.removeAll(Set.of("AND", "OR"));
    assertThat(rpmNames).as("the RPM's License").isEqualTo(spdx);
  }

  @Test
  void theProjectLicenceIsTheApacheLicenceVerbatim() throws IOException {
    Path debians = Path.of("/usr/share/common-licenses/Apache-2.0");
    assumeTrue(Files.exists(debians), "needs Debian's copy of the Apache License 2.0 to compare with");
    assertThat(Files.readString(Path.of("LICENSE"))).isEqualTo(Files.readString(debians));
    assertThat(Files.readString(Path.of("NOTICE"))).startsWith("shmguard\nCopyright ").contains("Jackson", "FastDoubleParser");
  }

  private static boolean shmguardsOwn(String path) {
    return path.startsWith("org/shmguard/") || path.startsWith("META-INF/maven/") || path.startsWith("META-INF/services/")
        || path.equals("META-INF/MANIFEST.MF") || path.equals("logback.xml");
  }

  /** A multi-release class counts as the class it replaces. */
  private static String versionless(String path) {
    return path.replaceFirst("^META-INF/versions/\\d+/", "");
  }

  /** The last paragraph whose pattern matches, as DEP-5 says. */
  private static Paragraph governing(List<Paragraph> paragraphs, String path) {
    Paragraph found = null;
    for (Paragraph p : paragraphs) {
      if (p.matches(path)) {
        found = p;
      }
    }
    assertThat(found).as("Files: * must come first and match everything").isNotNull();
    return found;
  }

  private static List<Paragraph> filesParagraphs() throws IOException {
    List<Paragraph> out = new ArrayList<>();
    for (String block : Files.readString(COPYRIGHT).split("\n\n")) {
      if (!block.startsWith("Files:")) {
        continue;
      }
      List<String> files = new ArrayList<>();
      String license = null;
      String field = null;
      for (String line : block.split("\n")) {
        if (!line.startsWith(" ")) {
          field = line.substring(0, line.indexOf(':'));
          line = line.substring(line.indexOf(':') + 1);
          if (field.equals("License")) {
            license = line.trim();
          }
        }
        if ("Files".equals(field)) {
          files.addAll(List.of(line.trim().split("\\s+")));
        }
      }
      files.removeIf(String::isEmpty);
      out.add(new Paragraph(files, license));
    }
    return out;
  }

  private static Set<String> licenceWords(String expression) {
    Set<String> words = new TreeSet<>(List.of(expression.replaceAll("[(),]", " ").trim().split("\\s+")));
    words.removeAll(Set.of("and", "or"));
    return words;
  }

  /** DEP-5 patterns: * matches anything, slashes too; ? one character. */
  private static Pattern glob(String pattern) {
    StringBuilder re = new StringBuilder();
    for (char c : pattern.toCharArray()) {
      re.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
    }
    return Pattern.compile(re.toString());
  }

  /** A class file of {@code lib} outside META-INF, by which to find it inside the shaded jar. */
  private static String sampleClass(Path lib) throws IOException {
    try (ZipFile z = new ZipFile(lib.toFile())) {
      for (ZipEntry e : Collections.list(z.entries())) {
        if (!e.isDirectory() && !e.getName().startsWith("META-INF/") && !e.getName().equals("module-info.class")
            && (e.getName().endsWith(".class") || e.getName().endsWith(".so"))) {
          return e.getName();
        }
      }
    }
    return null;
  }

  /** The .pom beside a jar in the local Maven repository (a classifier's jar shares its artifact's POM). */
  private static Path pomOf(Path jar) {
    Path dir = jar.getParent();
    String version = dir.getFileName().toString();
    String artifact = dir.getParent().getFileName().toString();
    return dir.resolve(artifact + "-" + version + ".pom");
  }

  /** The licence names a POM declares, or its parent's when it declares none. */
  private static List<String> pomLicences(Path pom) throws Exception {
    assertThat(pom).as("the POM of a bundled library").exists();
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Document d = f.newDocumentBuilder().parse(pom.toFile());
    Element project = d.getDocumentElement();
    List<String> names = new ArrayList<>();
    Element licenses = child(project, "licenses");
    if (licenses != null) {
      NodeList list = licenses.getElementsByTagName("license");
      for (int i = 0; i < list.getLength(); i++) {
        names.add(child((Element) list.item(i), "name").getTextContent().trim().replaceAll("\\s+", " "));
      }
    }
    Element parent = child(project, "parent");
    if (!names.isEmpty() || parent == null) {
      return names;
    }
    Path repo = pom.getParent().getParent().getParent();
    String group = child(parent, "groupId").getTextContent().trim();
    String ownGroup = child(project, "groupId") == null ? group : child(project, "groupId").getTextContent().trim();
    for (int i = 0; i < ownGroup.split("\\.").length; i++) {
      repo = repo.getParent();
    }
    String artifact = child(parent, "artifactId").getTextContent().trim();
    String version = child(parent, "version").getTextContent().trim();
    return pomLicences(repo.resolve(group.replace('.', '/')).resolve(artifact).resolve(version)
        .resolve(artifact + "-" + version + ".pom"));
  }

  private static Element child(Element e, String name) {
    for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element c && c.getTagName().equals(name)) {
        return c;
      }
    }
    return null;
  }
}
