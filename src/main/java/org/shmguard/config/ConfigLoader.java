package org.shmguard.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Loads the configuration: an explicit file, else /etc/shmguard/shmguard.yaml if present, else
 * the built-in defaults (the shipped config/shmguard.yaml, bundled in the jar); then the drop-ins
 * beside that file ({@code shmguard.yaml.d/*.yaml}, see {@link DropIns}), in byte order of their
 * names. Each file is merged over what came before it: a section merges key by key, and a key a
 * later file sets replaces the value before it whole (a scalar, and a list too: a drop-in's
 * {@code reap.patterns} is the whole list, not an addition to it). Every file is checked on its
 * own (file, line, key); the rules between keys are checked on the merged result and name the
 * file and line of the key set last.
 *
 * <pre>{@code
 * Config c = ConfigLoader.resolve(null);            // the system file and its drop-ins, or the defaults
 * Config c = ConfigLoader.load(Path.of("my.yaml")); // one file over the defaults, without drop-ins
 * }</pre>
 */
public final class ConfigLoader {
  public static final Path SYSTEM_FILE = Path.of("/etc/shmguard/shmguard.yaml");
  public static final String DEFAULTS_RESOURCE = "/org/shmguard/config/shmguard.yaml";
  public static final String DEFAULTS_SOURCE = "built-in defaults";

  private ConfigLoader() {}

  /**
   * The configuration to run with: {@code explicit} if given, else the system file if it exists,
   * else the defaults; with the drop-ins of that file ({@link #dropInDirectory}) over it.
   */
  public static Config resolve(Path explicit) throws ConfigException {
    Path main = explicit != null ? explicit : SYSTEM_FILE;
    // A dangling link there is an error to report, not a reason to run on the defaults.
    boolean readMain = explicit != null || Files.exists(SYSTEM_FILE, LinkOption.NOFOLLOW_LINKS);
    return merged(readMain ? main : null, DropIns.list(dropInDirectory(main)));
  }

  /** Where the drop-ins of {@code main} are looked for: {@code main} with ".d" added ("/etc/shmguard/shmguard.yaml.d"). */
  public static Path dropInDirectory(Path main) {
    return DropIns.directoryOf(main);
  }

  /**
   * {@code main} (null: none) and then each of {@code dropIns} over the defaults. Every file's
   * errors are reported together, in the order the files are read.
   */
  static Config merged(Path main, List<Path> dropIns) throws ConfigException {
    Map<String, Object> values = defaultValues();
    Map<String, ConfigPlace> places = new HashMap<>();
    List<ConfigException> errors = new ArrayList<>();
    List<Path> files = new ArrayList<>();
    if (main != null) {
      files.add(main);
    }
    files.addAll(dropIns);
    for (int rank = 0; rank < files.size(); rank++) {
      Path file = files.get(rank);
      String source = file.toString();
      try {
        Map<String, Integer> lines = new HashMap<>();
        Map<String, Object> layer = validate(YamlNode.parse(new StringReader(ConfigFile.read(file)), source), source, lines);
        values.putAll(layer);
        int r = main == null ? rank + 1 : rank;
        lines.forEach((key, line) -> places.put(key, new ConfigPlace(source, line, r)));
      } catch (ConfigException e) {
        errors.add(e);
      }
    }
    if (!errors.isEmpty()) {
      throw ConfigException.inFileOrder(errors);
    }
    String source = describe(main, dropIns);
    ConfigPlace defaults = ConfigPlace.defaults(DEFAULTS_SOURCE);
    return Config.from(source, values, key -> places.getOrDefault(key, defaults));
  }

  /** "/etc/shmguard/shmguard.yaml + shmguard.yaml.d/10-observe.yaml": what the start-up line names. */
  private static String describe(Path main, List<Path> dropIns) {
    StringBuilder sb = new StringBuilder(main == null ? DEFAULTS_SOURCE : main.toString());
    for (Path d : dropIns) {
      sb.append(" + ").append(d.getParent().getFileName()).append('/').append(d.getFileName());
    }
    return sb.toString();
  }

  /** The built-in defaults. */
  public static Config defaults() throws ConfigException {
    return Config.from(DEFAULTS_SOURCE, defaultValues());
  }

  /** One file's settings over the defaults, without drop-ins; the file is read within {@link ConfigLimits} (see {@link ConfigFile}). */
  public static Config load(Path file) throws ConfigException {
    return parse(new StringReader(ConfigFile.read(file)), file.toString());
  }

  /** YAML text's settings over the defaults; {@code source} names it in messages. */
  public static Config parse(Reader yaml, String source) throws ConfigException {
    Map<String, Object> values = defaultValues();
    Map<String, Integer> lines = new HashMap<>();
    values.putAll(validate(YamlNode.parse(yaml, source), source, lines));
    ConfigPlace defaults = ConfigPlace.defaults(DEFAULTS_SOURCE);
    return Config.from(source, values, key -> lines.containsKey(key) ? new ConfigPlace(source, lines.get(key), 0) : defaults);
  }

  private static Map<String, Object> defaultValues() throws ConfigException {
    try (InputStream in = ConfigLoader.class.getResourceAsStream(DEFAULTS_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the built-in defaults " + DEFAULTS_RESOURCE + " are missing from the jar");
      }
      Map<String, Object> values = validate(YamlNode.parse(new InputStreamReader(in, StandardCharsets.UTF_8), DEFAULTS_SOURCE), DEFAULTS_SOURCE);
      for (String key : ConfigSchema.KEYS.keySet()) {
        if (!values.containsKey(key)) {
          throw new IllegalStateException("the built-in defaults lack " + key);
        }
      }
      return values;
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the built-in defaults", e);
    }
  }

  /** Checks every key against the schema and reads its value. */
  static Map<String, Object> validate(YamlNode root, String source) throws ConfigException {
    return validate(root, source, new HashMap<>());
  }

  /**
   * As above, noting in {@code lines} the line of every key the file sets (for errors that span
   * keys). Every key is checked before any error is thrown: one exception reports them all.
   */
  static Map<String, Object> validate(YamlNode root, String source, Map<String, Integer> lines) throws ConfigException {
    Map<String, Object> values = new HashMap<>();
    if (root.isNull()) {
      return values;
    }
    if (!root.isMap()) {
      throw new ConfigException(source, root.line(), null,
          "the configuration must be a mapping of keys (" + String.join(", ", ConfigSchema.childrenOf("")) + ")");
    }
    List<ConfigException> errors = new ArrayList<>();
    walk(root, "", source, values, lines, errors);
    if (!errors.isEmpty()) {
      throw ConfigException.all(errors);
    }
    return values;
  }

  private static void walk(YamlNode section, String path, String source, Map<String, Object> values,
      Map<String, Integer> lines, List<ConfigException> errors) {
    for (Map.Entry<String, YamlNode> e : section.map().entrySet()) {
      String key = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
      YamlNode node = e.getValue();
      ValueType<?> type = ConfigSchema.KEYS.get(key);
      if (type != null) {
        try {
          values.put(key, type.parse(node));
          lines.put(key, node.line());
        } catch (IllegalArgumentException bad) {
          errors.add(new ConfigException(source, node.line(), key, bad.getMessage() + "; allowed: " + type.allowed()));
        }
      } else if (ConfigSchema.isSection(key)) {
        if (node.isNull()) {
          continue; // "reap:" with nothing under it keeps every default
        }
        if (!node.isMap()) {
          errors.add(new ConfigException(source, node.line(), key,
              "must be a mapping with the keys " + String.join(", ", ConfigSchema.childrenOf(key))));
          continue;
        }
        walk(node, key, source, values, lines, errors);
      } else {
        Set<String> allowed = ConfigSchema.childrenOf(path);
        String meant = allowed.stream().filter(a -> a.equalsIgnoreCase(e.getKey())).findFirst()
            .map(a -> " (did you mean " + a + "? keys are case-sensitive)").orElse("");
        errors.add(new ConfigException(source, node.line(), key,
            "unknown key" + meant + "; allowed " + (path.isEmpty() ? "at the top level" : "under " + path) + ": "
                + String.join(", ", allowed)));
      }
    }
  }
}
