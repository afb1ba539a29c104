package org.shmguard.it.ship;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What {@code kubectl kustomize DIR} makes of a kustomization that uses only {@code resources}
 * (files and directories), {@code namespace} and {@code images}: the build the tests use where no
 * kubectl with kustomize v4 or later is installed (Debian 12 ships kubectl 1.20, whose kustomize
 * v2.0.3 cannot take a directory in {@code resources}). Where one is, KubernetesManifestsTest
 * checks that both builds give the same objects. Any other kustomization field is refused, so
 * that a manifest using one is not built wrongly here.
 */
final class KustomizeBuild {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> KNOWN = Set.of("apiVersion", "kind", "namespace", "resources", "images");
  /** The cluster-scoped kinds a namespace transformer leaves alone (a Namespace is renamed instead). */
  private static final Set<String> CLUSTER_SCOPED = Set.of("PriorityClass", "ClusterRole", "ClusterRoleBinding",
      "CustomResourceDefinition", "StorageClass", "PersistentVolume", "Node", "RuntimeClass",
      "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration");

  private KustomizeBuild() {}

  static List<JsonNode> build(Path dir) throws IOException {
    JsonNode k = YAML.readTree(dir.resolve("kustomization.yaml").toFile());
    k.fieldNames().forEachRemaining(f -> {
      if (!KNOWN.contains(f)) {
        throw new IllegalArgumentException(dir + "/kustomization.yaml uses " + f
            + ", which this build does not know: build it with kubectl kustomize");
      }
    });
    List<JsonNode> objects = new ArrayList<>();
    for (JsonNode r : k.path("resources")) {
      Path p = dir.resolve(r.asText()).normalize();
      objects.addAll(Files.isDirectory(p) ? build(p) : documents(Files.readString(p)));
    }
    if (k.hasNonNull("namespace")) {
      String ns = k.get("namespace").asText();
      for (JsonNode o : objects) {
        ObjectNode meta = (ObjectNode) o.get("metadata");
        String kind = o.path("kind").asText();
        if (kind.equals("Namespace")) {
          meta.put("name", ns);
        } else if (!CLUSTER_SCOPED.contains(kind)) {
          meta.put("namespace", ns);
        }
      }
    }
    for (JsonNode image : k.path("images")) {
      for (JsonNode o : objects) {
        setImages(o, image);
      }
    }
    return objects;
  }

  /** Every container's and init container's image at any depth whose name is image.name. */
  private static void setImages(JsonNode node, JsonNode image) {
    if (node.isArray()) {
      node.forEach(n -> setImages(n, image));
      return;
    }
    if (!node.isObject()) {
      return;
    }
    for (String list : List.of("containers", "initContainers")) {
      for (JsonNode c : node.path(list)) {
        if (c.isObject() && c.hasNonNull("image")) {
          String changed = changedImage(c.get("image").asText(), image);
          if (changed != null) {
            ((ObjectNode) c).put("image", changed);
          }
        }
      }
    }
    node.elements().forEachRemaining(n -> setImages(n, image));
  }

  /** The new reference, or null when {@code ref} is not image.name with or without a tag or digest. */
  private static String changedImage(String ref, JsonNode image) {
    int at = ref.indexOf('@');
    String nameAndTag = at < 0 ? ref : ref.substring(0, at);
    int colon = nameAndTag.lastIndexOf(':');
    boolean tagged = colon > nameAndTag.lastIndexOf('/');
    String name = tagged ? nameAndTag.substring(0, colon) : nameAndTag;
    if (!name.equals(image.path("name").asText())) {
      return null;
    }
    String suffix = ref.substring(name.length());
    if (image.hasNonNull("digest")) {
      suffix = "@" + image.get("digest").asText();
    } else if (image.hasNonNull("newTag")) {
      suffix = ":" + image.get("newTag").asText();
    }
    return (image.hasNonNull("newName") ? image.get("newName").asText() : name) + suffix;
  }

  static List<JsonNode> documents(String yaml) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (YAMLParser parser = new YAMLFactory().createParser(yaml)) {
      var it = YAML.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d != null && !d.isMissingNode() && !d.isNull()) {
          docs.add(d);
        }
      }
    }
    return docs;
  }
}
