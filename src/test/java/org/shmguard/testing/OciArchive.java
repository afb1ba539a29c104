package org.shmguard.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * An OCI image archive of one uncompressed layer, made from a directory without a registry or a
 * builder: {@code oci-layout}, {@code index.json} naming the image (the annotation
 * {@code io.containerd.image.name}, which {@code ctr images import} takes as its name) and the
 * blobs (layer, config, manifest) by their sha256. For linux/amd64, with {@code PATH=/bin}.
 *
 * <pre>{@code
 * Path tar = OciArchive.write(root, "shmguard.test/pause:3.4", List.of("/pause"), work);
 * }</pre>
 */
final class OciArchive {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MANIFEST = "application/vnd.oci.image.manifest.v1+json";

  private OciArchive() {}

  /**
   * Writes the image of {@code root} named {@code name} with {@code entrypoint} under {@code work}
   * (which must be empty); the archive's path. The layer's files are root's.
   */
  static Path write(Path root, String name, List<String> entrypoint, Path work) throws IOException {
    Path blobs = Files.createDirectories(work.resolve("layout/blobs/sha256"));
    Path layer = work.resolve("layer.tar");
    Cmd.run("tar", "--numeric-owner", "--owner=0", "--group=0", "-C", root.toString(), "-cf", layer.toString(), ".");
    String layerDigest = blob(blobs, Files.readAllBytes(layer));

    ObjectNode config = JSON.createObjectNode().put("architecture", "amd64").put("os", "linux");
    ObjectNode run = config.putObject("config");
    run.putArray("Env").add("PATH=/bin");
    var ep = run.putArray("Entrypoint");
    entrypoint.forEach(ep::add);
    config.putObject("rootfs").put("type", "layers").putArray("diff_ids").add(layerDigest);
    byte[] configBytes = JSON.writeValueAsBytes(config);

    ObjectNode manifest = JSON.createObjectNode().put("schemaVersion", 2).put("mediaType", MANIFEST);
    manifest.putObject("config").put("mediaType", "application/vnd.oci.image.config.v1+json")
        .put("digest", blob(blobs, configBytes)).put("size", configBytes.length);
    manifest.putArray("layers").addObject().put("mediaType", "application/vnd.oci.image.layer.v1.tar")
        .put("digest", layerDigest).put("size", Files.size(layer));
    byte[] manifestBytes = JSON.writeValueAsBytes(manifest);

    ObjectNode index = JSON.createObjectNode().put("schemaVersion", 2);
    ObjectNode m = index.putArray("manifests").addObject().put("mediaType", MANIFEST)
        .put("digest", blob(blobs, manifestBytes)).put("size", manifestBytes.length);
    m.putObject("annotations").put("io.containerd.image.name", name)
        .put("org.opencontainers.image.ref.name", name.substring(name.lastIndexOf(':') + 1));
    m.putObject("platform").put("architecture", "amd64").put("os", "linux");
    Files.writeString(work.resolve("layout/index.json"), JSON.writeValueAsString(index));
    Files.writeString(work.resolve("layout/oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
    Path archive = work.resolve("image.tar");
    Cmd.run("tar", "-C", work.resolve("layout").toString(), "-cf", archive.toString(), ".");
    return archive;
  }

  /** Writes {@code bytes} as a blob; its digest. */
  private static String blob(Path blobs, byte[] bytes) throws IOException {
    try {
      String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
      Files.write(blobs.resolve(hex), bytes);
      return "sha256:" + hex;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
