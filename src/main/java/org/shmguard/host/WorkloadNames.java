package org.shmguard.host;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Workload;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.nativ.SmallFiles;

/**
 * Names the pod or container a runtime's tmpfs belongs to, from the runtime's own files: a pod's
 * namespace and name from kubelet's pod log directory ({@code <podLogs>/<namespace>_<name>_<uid>}),
 * a Docker container's name from {@code config.v2.json} in its directory, a podman or CRI-O
 * container's from its storage's {@code containers.json} (CRI-O's pod sandboxes are named
 * {@code k8s_POD_<name>_<namespace>_<uid>_<attempt>}, which gives their pod).
 *
 * <p>Every one is read through {@link RootDirectory}: each directory from "/" down owned by root
 * and writable by no one else, opened without following a link anyone else made, the file itself
 * a regular file owned by root and written by no one else, and read up to a limit. What an
 * ordinary user could have placed is never read, and a name that cannot be read so leaves the
 * uid or id alone. A name, once read, is kept for as long as its mount is there. Each read is a
 * bounded walk ({@link PathWalks}): a root that stops answering leaves the name out, not the pass.
 */
final class WorkloadNames {
  private static final JsonFactory JSON = new JsonFactory();
  /** Docker's config.v2.json is a few KiB to tens of KiB. */
  private static final int CONFIG_LIMIT = 1 << 20;
  /**
   * containers.json lists every container of the storage, about 400 bytes each: 4 MiB is some
   * 10,000 containers. Beyond it the name is left out rather than the daemon's small heap spent.
   */
  private static final int CONTAINERS_LIMIT = 4 << 20;
  /** At most this many pod log directories are looked at per discovery (a node runs at most a few hundred pods). */
  private static final int POD_LOGS_LIMIT = 100_000;

  private final HostPaths paths;
  private final RuntimeRoots roots;
  /** Named workloads by the mount id of their tmpfs. */
  private final Map<Long, Workload> named = new HashMap<>();
  /** The pod log directory's pods by uid, read at most once per discovery; null until read. */
  private Map<String, String[]> podLogIndex;

  WorkloadNames(HostPaths paths, RuntimeRoots roots) {
    this.paths = paths;
    this.roots = roots;
  }

  /** {@code w} with its name, where the runtime's files give it; as it is otherwise. */
  Workload name(long mountId, Workload w, String storageRoot, String driverDir) {
    Workload known = named.get(mountId);
    if (known != null) {
      return known;
    }
    Workload result = w;
    boolean pod = w.runtime().equals(Workload.KUBERNETES);
    boolean docker = w.runtime().equals(Workload.DOCKER);
    String walked = pod ? roots.podLogs() : docker ? roots.dockerRoot() : storageRoot;
    try {
      if (!walked.isEmpty()) {
        // a root on a network filesystem that stops answering must not hold up the pass
        result = PathWalks.shared().run(paths.resolve(walked),
            () -> pod ? pod(w) : docker ? docker(w) : storage(w, storageRoot, driverDir));
      }
    } catch (IOException | RuntimeException e) {
      result = w; // not readable as the rules require: the uid or id alone
    }
    if (result.hasName()) {
      named.put(mountId, result);
    }
    return result;
  }

  /** Forgets the names of mounts not in {@code mountIds}, and the pod log directory as read by this discovery. */
  void keepOnly(Set<Long> mountIds) {
    named.keySet().retainAll(mountIds);
    podLogIndex = null;
  }

  private Workload pod(Workload w) throws IOException {
    if (podLogIndex == null) {
      podLogIndex = podLogIndex();
    }
    String[] named = podLogIndex.get(w.podUid());
    return named == null ? w : w.named(named[0], named[1]);
  }

  /**
   * Each pod uid the pod log directory names, with its namespace and name: read once per
   * discovery, whatever the number of pods to name. Only entries of kubelet's shape, directories
   * root owns, never links.
   */
  private Map<String, String[]> podLogIndex() throws IOException {
    Map<String, String[]> index = new HashMap<>();
    List<String> entries = new ArrayList<>();
    try (RootDirectory logs = RootDirectory.open(Path.of(paths.resolve(roots.podLogs())), false)) {
      logs.forEachName(n -> {
        if (entries.size() < POD_LOGS_LIMIT) {
          entries.add(n);
        }
      });
      for (String n : entries) {
        String[] p = n.split("_", -1);
        if (p.length == 3 && Workload.isPodName(p[0], p[1]) && Workload.isPodUid(p[2])) {
          var st = logs.entry(n);
          if (st != null && st.isDirectory() && st.uid() == 0) { // kubelet makes it, root's, a directory; never a link
            index.put(p[2], new String[] {p[0], p[1]});
          }
        }
      }
    }
    return index;
  }

  private Workload docker(Workload w) throws IOException {
    Path dir = Path.of(paths.resolve(roots.dockerRoot() + "/containers/" + w.containerId()));
    try (RootDirectory container = RootDirectory.open(dir, false)) {
      SmallFiles.Contents c = rootsOwn(container.readFile("config.v2.json", CONFIG_LIMIT), CONFIG_LIMIT);
      try (JsonParser p = JSON.createParser(c.bytes())) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          return w;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken value = p.nextToken();
          if (field.equals("Name") && value == JsonToken.VALUE_STRING) {
            String name = p.getText().startsWith("/") ? p.getText().substring(1) : p.getText();
            return Workload.isContainerName(name) ? w.named(name) : w;
          }
          p.skipChildren();
        }
      }
    }
    return w;
  }

  /** A container of podman's or CRI-O's storage: its names from containers.json of each storage root (CRI-O's run root has none). */
  private Workload storage(Workload w, String storageRoot, String driverDir) throws IOException {
    List<String> candidates = new ArrayList<>();
    if (storageRoot != null) {
      candidates.add(storageRoot);
    }
    roots.containerStorage().stream().filter(r -> !r.equals(storageRoot)).forEach(candidates::add);
    for (String root : candidates) {
      List<String> names = containerNames(root + "/" + driverDir, w.containerId());
      if (names != null) {
        for (String name : names) {
          Workload crio = crioSandbox(w, name);
          if (crio != null) {
            return crio;
          }
        }
        for (String name : names) {
          if (Workload.isContainerName(name)) {
            return w.named(name);
          }
        }
        return w;
      }
    }
    return w;
  }

  /** The names containers.json in {@code driverDir} (such as .../overlay-containers) gives container {@code id}, or null when it lists no such container. */
  private List<String> containerNames(String driverDir, String id) throws IOException {
    Path dir = Path.of(paths.resolve(driverDir));
    SmallFiles.Contents c;
    try (RootDirectory containers = RootDirectory.open(dir, false)) {
      c = rootsOwn(containers.readFile("containers.json", CONTAINERS_LIMIT), CONTAINERS_LIMIT);
    } catch (java.nio.file.NoSuchFileException e) {
      return null;
    }
    try (JsonParser p = JSON.createParser(c.bytes())) {
      if (p.nextToken() != JsonToken.START_ARRAY) {
        return null;
      }
      while (p.nextToken() == JsonToken.START_OBJECT) {
        String thisId = null;
        List<String> names = new ArrayList<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken value = p.nextToken();
          if (field.equals("id") && value == JsonToken.VALUE_STRING) {
            thisId = p.getText();
          } else if (field.equals("names") && value == JsonToken.START_ARRAY) {
            while (p.nextToken() == JsonToken.VALUE_STRING) {
              names.add(p.getText());
            }
          } else {
            p.skipChildren();
          }
        }
        if (id.equals(thisId)) {
          return names;
        }
      }
    }
    return null;
  }

  /**
   * The pod CRI-O made sandbox container {@code name} for: {@code k8s_POD_<name>_<namespace>_<uid>_<attempt>}
   * (and {@code k8s_<container>_<pod>_<namespace>_<uid>_<attempt>} for its containers); null otherwise.
   */
  static Workload crioSandbox(Workload w, String name) {
    String[] p = name.split("_", -1);
    if (p.length == 6 && p[0].equals("k8s") && Workload.isPodName(p[3], p[2]) && Workload.isPodUid(p[4])
        && p[5].chars().allMatch(Character::isDigit) && !p[5].isEmpty()) {
      return w.ofPod(p[3], p[2], p[4]);
    }
    return null;
  }

  /** {@code c} if root owns it, no one else may write it and it is not over {@code limit}; else an IOException. */
  private static SmallFiles.Contents rootsOwn(SmallFiles.Contents c, int limit) throws IOException {
    if (c.ownerUid() != 0 || (c.permissions() & 022) != 0) {
      throw new IOException("not root's alone");
    }
    if (c.bytes().length > limit) {
      throw new IOException("larger than " + limit + " bytes");
    }
    return c;
  }
}
