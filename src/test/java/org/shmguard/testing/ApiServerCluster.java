package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A Kubernetes control plane without nodes, started in the test sandbox: Debian's etcd-server and
 * the kube-apiserver that src/test/k8s-apiserver/build-kube-apiserver.sh builds from Debian 12's
 * kubernetes source package (cached under /var/cache/shmguard/kube-apiserver/VERSION-HASH), both
 * on 127.0.0.1 on ports found free, with etcd's data, a CA, etcd's and the API server's
 * certificates, the service-account key and a token of group system:masters made here in a 0700
 * directory under the sandbox's /run. No controller manager, scheduler or kubelet runs: pods are
 * admitted and stay Pending ({@link KubeletNode} adds a node). Ended by pid on close.
 *
 * <p>Started through a launcher ({@code nsenter --net=FILE --}), both run in that network
 * namespace, where the test's JVM cannot connect: it then speaks to the API server through
 * {@link #kubectl} alone.
 */
public final class ApiServerCluster implements AutoCloseable {
  public static final Path BUILD_SCRIPT = Path.of("src/test/k8s-apiserver/build-kube-apiserver.sh");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path dir;
  private final List<Process> daemons = new ArrayList<>();
  private final List<String> launcher;
  private Path binaries;
  private final String token = newToken();
  private int port;
  private int etcdClient;
  private HttpClient http;

  private static String newToken() {
    byte[] b = new byte[16];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private ApiServerCluster(Path dir, List<String> launcher) {
    this.dir = dir;
    this.launcher = List.copyOf(launcher);
  }

  /**
   * Starts etcd and kube-apiserver with the admission plugins NamespaceLifecycle, Priority and
   * ResourceQuota (ServiceAccount admission off: it needs the controller manager's tokens), and
   * {@code admissionConfig} (an AdmissionConfiguration, or null for none) as the admission
   * control config file; returns once /readyz answers ok.
   */
  public static ApiServerCluster start(Path binaries, String admissionConfig) throws Exception {
    return start(binaries, admissionConfig, List.of());
  }

  /** As {@link #start(Path, String)}, etcd and kube-apiserver started through {@code launcher}. */
  public static ApiServerCluster start(Path binaries, String admissionConfig, List<String> launcher) throws Exception {
    Sandbox.require();
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/etcd")), "needs etcd (Debian package etcd-server)");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "needs openssl (Debian package openssl)");
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "apiserver-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    ApiServerCluster c = new ApiServerCluster(dir, launcher);
    try {
      c.startAll(binaries, admissionConfig);
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  /**
   * The directory holding kube-apiserver and Debian's kubectl 1.20 from the cache, built now
   * (minutes) where the cache lacks them and Debian's Go and the source package can be had; the
   * calling test is skipped otherwise.
   */
  public static Path binaries() throws Exception {
    Sandbox.require();
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/go")), "needs Debian's Go (golang-go) to build kube-apiserver");
    Process p = new ProcessBuilder("bash", BUILD_SCRIPT.toString()).redirectErrorStream(false)
        .redirectError(ProcessBuilder.Redirect.INHERIT).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assumeTrue(p.waitFor(60, TimeUnit.MINUTES), "building kube-apiserver took over an hour");
    assumeTrue(p.exitValue() == 0, "cannot build kube-apiserver (no deb-src entry or no network?): see the test's stderr");
    return Path.of(out);
  }

  private void startAll(Path binaries, String admissionConfig) throws Exception {
    this.binaries = binaries;
    // One CA signs every certificate. etcd listens on loopback, where any local user could reach
    // it, so it takes only clients and peers with a certificate of this CA (its key stays in
    // this 0700 directory).
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=shmguard-test-ca",
        "-keyout", path("ca.key"), "-out", path("ca.crt"));
    certificate("etcd", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
    certificate("etcd-client", "extendedKeyUsage=clientAuth\n");
    certificate("apiserver", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");

    etcdClient = freePort();
    int etcdPeer = freePort();
    Path etcdData = Files.createDirectory(dir.resolve("etcd"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    launch("etcd", "/usr/bin/etcd", "--name", "shmguard-test", "--data-dir", etcdData.toString(),
        "--listen-client-urls", "https://127.0.0.1:" + etcdClient, "--advertise-client-urls", "https://127.0.0.1:" + etcdClient,
        "--listen-peer-urls", "https://127.0.0.1:" + etcdPeer, "--initial-advertise-peer-urls", "https://127.0.0.1:" + etcdPeer,
        "--initial-cluster", "shmguard-test=https://127.0.0.1:" + etcdPeer, "--listen-metrics-urls", "",
        "--cert-file", path("etcd.crt"), "--key-file", path("etcd.key"), "--client-cert-auth", "--trusted-ca-file", path("ca.crt"),
        "--peer-cert-file", path("etcd.crt"), "--peer-key-file", path("etcd.key"), "--peer-client-cert-auth",
        "--peer-trusted-ca-file", path("ca.crt"));

    openssl("genrsa", "-out", path("sa.key"), "2048");
    Files.writeString(dir.resolve("tokens.csv"), token + ",shmguard-test-admin,shmguard-test-admin,\"system:masters\"\n");

    port = freePort();
    List<String> cmd = new ArrayList<>(List.of(binaries.resolve("kube-apiserver").toString(),
        "--etcd-servers=https://127.0.0.1:" + etcdClient, "--etcd-cafile=" + path("ca.crt"),
        "--etcd-certfile=" + path("etcd-client.crt"), "--etcd-keyfile=" + path("etcd-client.key"),
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + port, "--insecure-port=0",
        "--tls-cert-file=" + path("apiserver.crt"), "--tls-private-key-file=" + path("apiserver.key"),
        "--cert-dir=" + path("certs"),
        "--token-auth-file=" + path("tokens.csv"), "--authorization-mode=RBAC",
        "--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file=" + path("sa.key"),
        "--service-account-signing-key-file=" + path("sa.key"), "--service-cluster-ip-range=10.96.0.0/24",
        "--enable-admission-plugins=NamespaceLifecycle,Priority,ResourceQuota",
        "--disable-admission-plugins=ServiceAccount",
        // A node is reached at its InternalIP (logs, exec): its name resolves nowhere.
        "--kubelet-preferred-address-types=InternalIP,Hostname",
        "--enable-priority-and-fairness=false", "--profiling=false", "--logtostderr=true", "--v=1"));
    if (admissionConfig != null) {
      Files.writeString(dir.resolve("admission.yaml"), admissionConfig);
      cmd.add("--admission-control-config-file=" + path("admission.yaml"));
    }
    launch("kube-apiserver", cmd.toArray(String[]::new));

    Files.writeString(kubeconfig(), """
        apiVersion: v1
        kind: Config
        clusters:
          - name: test
            cluster: {server: "https://127.0.0.1:%d", certificate-authority: "%s"}
        users:
          - name: admin
            user: {token: "%s"}
        contexts:
          - name: test
            context: {cluster: test, user: admin}
        current-context: test
        """.formatted(port, path("ca.crt"), token));
    http = HttpClient.newBuilder().sslContext(trusting(dir.resolve("ca.crt"))).connectTimeout(Duration.ofSeconds(10)).build();
    Eventually.until(() -> "kube-apiserver to be ready:\n" + logTail(), Duration.ofMinutes(5), this::ready);
  }

  private boolean ready() {
    for (Process p : daemons) {
      if (!p.isAlive()) {
        throw new AssertionError(p.info().command().orElse("?") + " exited (" + p.exitValue() + "):\n" + logTail());
      }
    }
    if (!launcher.isEmpty()) {
      return kubectl("get", "--raw", "/readyz").status() == 0;
    }
    try {
      return request("GET", "/readyz", null).statusCode() == 200;
    } catch (IOException e) {
      return false;
    }
  }

  /** Runs the cached kubectl 1.20 with {@code args} as the admin, through the launcher, and waits for it. */
  public Cmd.Result kubectl(String... args) {
    List<String> cmd = new ArrayList<>(launcher);
    cmd.addAll(List.of(binaries.resolve("kubectl").toString(), "--kubeconfig", kubeconfig().toString(), "--request-timeout=60s"));
    cmd.addAll(List.of(args));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  /** The admin's bearer token (group system:masters). */
  public String token() {
    return token;
  }

  /** The API server's address, as a kubeconfig names it. */
  public String server() {
    return "https://127.0.0.1:" + port;
  }

  /** A kubeconfig for this cluster's admin (group system:masters). */
  public Path kubeconfig() {
    return dir.resolve("kubeconfig");
  }

  public Path dir() {
    return dir;
  }

  /** {@code method path} with {@code body} (JSON, or null) as the admin; the answer as it came. */
  public HttpResponse<String> request(String method, String path, Object body) throws IOException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(60));
    if (body != null) {
      String json = body instanceof String s ? s : JSON.writeValueAsString(body);
      b.header("Content-Type", method.equals("PATCH") ? "application/merge-patch+json" : "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(json));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    try {
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  /** GET {@code path} as JSON; fails the test unless the server answers 200. */
  public JsonNode get(String path) throws IOException {
    HttpResponse<String> r = request("GET", path, null);
    if (r.statusCode() != 200) {
      throw new AssertionError("GET " + path + ": " + r.statusCode() + " " + r.body());
    }
    return JSON.readTree(r.body());
  }

  /** GET {@code path} from etcd over TLS that trusts the CA but shows no client certificate. */
  public HttpResponse<String> etcdWithoutClientCertificate(String path) throws Exception {
    HttpClient anonymous = HttpClient.newBuilder().sslContext(trusting(dir.resolve("ca.crt")))
        .connectTimeout(Duration.ofSeconds(10)).build();
    return anonymous.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + etcdClient + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The last lines etcd and kube-apiserver printed, for a failure message. */
  public String logTail() {
    StringBuilder s = new StringBuilder();
    for (String name : List.of("etcd", "kube-apiserver")) {
      try {
        List<String> lines = Files.readAllLines(dir.resolve(name + ".out"));
        // A Go crash prints its cause first, then every goroutine's stack.
        int cause = -1;
        for (int i = 0; i < lines.size() && cause < 0; i++) {
          if (lines.get(i).startsWith("panic: ") || lines.get(i).startsWith("fatal error: ")) {
            cause = i;
          }
        }
        if (cause >= 0) {
          lines = lines.subList(Math.max(0, cause - 20), Math.min(lines.size(), cause + 40));
        }
        s.append("--- ").append(name).append('\n')
            .append(LogTail.last(lines, 60)).append('\n');
      } catch (IOException e) {
        s.append("--- ").append(name).append(": no log\n");
      }
    }
    return s.toString();
  }

  private String path(String name) {
    return dir.resolve(name).toString();
  }

  /** {@code name}.key and {@code name}.crt, signed by the CA with the extensions {@code ext}. */
  private void certificate(String name, String ext) throws IOException {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=shmguard-test-" + name, "-keyout", path(name + ".key"),
        "-out", path(name + ".csr"));
    Files.writeString(dir.resolve(name + ".ext"), ext);
    openssl("x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
        "-CAcreateserial", "-days", "1", "-extfile", path(name + ".ext"), "-out", path(name + ".crt"));
  }

  private void openssl(String... args) {
    List<String> cmd = new ArrayList<>(List.of("/usr/bin/openssl"));
    cmd.addAll(List.of(args));
    Cmd.run(cmd.toArray(String[]::new));
  }

  private void launch(String name, String... command) throws IOException {
    List<String> cmd = new ArrayList<>(launcher);
    cmd.addAll(List.of(command));
    daemons.add(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".out").toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static SSLContext trusting(Path caPem) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(caPem)) {
      ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  /** Ends kube-apiserver, then etcd, by pid; their files go with the sandbox's /run. */
  @Override
  public void close() {
    if (daemons.stream().anyMatch(p -> !p.isAlive())) {
      System.err.println("ApiServerCluster: a daemon exited before close:\n" + logTail());
    }
    for (int i = daemons.size() - 1; i >= 0; i--) {
      Process p = daemons.get(i);
      List<ProcessHandle> children = p.toHandle().descendants().toList();
      p.destroy();
      try {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      children.forEach(ProcessHandle::destroyForcibly);
    }
    Cmd.exec("rm", "-rf", "--one-file-system", dir.toString());
  }
}
