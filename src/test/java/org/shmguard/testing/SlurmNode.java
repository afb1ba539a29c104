package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real one-node Slurm cluster from Debian's packages (munged, slurmctld, slurmd), started in the
 * test sandbox as child processes in the foreground, with a munge key, state and spool directories
 * of its own under the sandbox's /run, and ports found free. Ended by pid on close, with every
 * process they started.
 *
 * <pre>{@code
 * try (SlurmNode slurm = SlurmNode.start(Map.of("Epilog", epilog.toString()))) {
 *   slurm.sbatch(script, "--uid=65534");
 * }
 * }</pre>
 */
public final class SlurmNode implements AutoCloseable {
  private static final List<String> PROGRAMS = List.of("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
      "/usr/bin/sbatch", "/usr/bin/scontrol", "/usr/bin/sinfo");

  private final Path dir;
  private final String node;
  private final List<Process> daemons = new ArrayList<>();

  private SlurmNode(Path dir, String node) {
    this.dir = dir;
    this.node = node;
  }

  /** Skips the calling test unless Slurm's and munge's programs are installed. */
  public static void requireInstalled() {
    for (String p : PROGRAMS) {
      assumeTrue(Files.isExecutable(Path.of(p)), "needs " + p + " (Debian packages slurmctld slurmd slurm-client munge)");
    }
  }

  /** Starts munged, slurmctld and slurmd with {@code extra} slurm.conf settings, and waits for the node to be idle. */
  public static SlurmNode start(Map<String, String> extra) throws IOException {
    Sandbox.require();
    requireInstalled();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "slurm-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    String node = Cmd.run("hostname", "-s").strip();
    SlurmNode s = new SlurmNode(dir, node);
    try {
      s.startAll(extra);
      return s;
    } catch (IOException | RuntimeException | Error e) {
      s.close();
      throw e;
    }
  }

  private void startAll(Map<String, String> extra) throws IOException {
    Path munge = Files.createDirectory(dir.resolve("munge"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    byte[] key = new byte[1024];
    new SecureRandom().nextBytes(key);
    Path keyFile = munge.resolve("munge.key");
    Files.write(keyFile, key);
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("r--------"));
    for (String d : List.of("state", "spool", "log")) {
      Files.createDirectory(dir.resolve(d));
    }
    Files.createDirectory(jobs());
    Cmd.run("chmod", "1777", jobs().toString()); // sticky: PosixFilePermissions cannot say it
    Path socket = munge.resolve("munge.socket");
    // -f: munged refuses to run as root without it; here root is the only user there is for it.
    launch("munged", "/usr/sbin/munged", "-F", "-f", "--key-file=" + keyFile, "--socket=" + socket,
        "--pid-file=" + munge.resolve("munged.pid"), "--log-file=" + munge.resolve("munged.log"),
        "--seed-file=" + munge.resolve("munged.seed"));
    Eventually.until("munged listens on " + socket, Duration.ofSeconds(30), () -> Files.exists(socket));

    StringBuilder conf = new StringBuilder();
    int ctldPort = freePort();
    int slurmdPort = freePort();
    int cpus = Runtime.getRuntime().availableProcessors();
    conf.append("ClusterName=shmguardtest\n")
        .append("SlurmctldHost=").append(node).append("(127.0.0.1)\n")
        .append("SlurmctldPort=").append(ctldPort).append('\n')
        .append("SlurmdPort=").append(slurmdPort).append('\n')
        .append("SlurmUser=root\nSlurmdUser=root\n")
        .append("AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=").append(socket).append('\n')
        .append("StateSaveLocation=").append(dir.resolve("state")).append('\n')
        .append("SlurmdSpoolDir=").append(dir.resolve("spool")).append('\n')
        .append("SlurmctldPidFile=").append(dir.resolve("slurmctld.pid")).append('\n')
        .append("SlurmdPidFile=").append(dir.resolve("slurmd.pid")).append('\n')
        .append("SlurmctldLogFile=").append(dir.resolve("log/slurmctld.log")).append('\n')
        .append("SlurmdLogFile=").append(dir.resolve("log/slurmd.log")).append('\n')
        // no cgroup hierarchy of our own in the sandbox: track a job by its process group
        .append("ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n")
        .append("AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nMpiDefault=none\n")
        .append("SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n")
        .append("ReturnToService=2\nPrologEpilogTimeout=120\n");
    extra.forEach((k, v) -> conf.append(k).append('=').append(v).append('\n'));
    conf.append("NodeName=").append(node).append(" NodeAddr=127.0.0.1 CPUs=").append(cpus).append(" State=UNKNOWN\n")
        .append("PartitionName=main Nodes=").append(node).append(" Default=YES MaxTime=INFINITE State=UP\n");
    Files.writeString(conf(), conf);

    launch("slurmctld", "/usr/sbin/slurmctld", "-D", "-i", "-f", conf().toString());
    launch("slurmd", "/usr/sbin/slurmd", "-D", "-f", conf().toString());
    Eventually.until(() -> "the node to be idle: " + state() + "\n" + logs(), Duration.ofSeconds(90),
        () -> state().startsWith("IDLE"));
  }

  private void launch(String name, String... command) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve(name + ".out").toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().put("SLURM_CONF", dir.resolve("slurm.conf").toString());
    daemons.add(pb.start());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public Path dir() {
    return dir;
  }

  /** The node's name: this host's short name, as Slurm and NHC call it. */
  public String node() {
    return node;
  }

  /** A directory every user may write to, for job scripts and their output. */
  public Path jobs() {
    return dir.resolve("jobs");
  }

  public Path conf() {
    return dir.resolve("slurm.conf");
  }

  /** Runs a Slurm client command against this cluster. */
  public Cmd.Result client(String... command) {
    List<String> cmd = new ArrayList<>(List.of("env", "SLURM_CONF=" + conf()));
    cmd.addAll(List.of(command));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  /** The node's state as sinfo prints it (%T, long form upper case: IDLE, DRAINED, IDLE+DRAIN...). */
  public String state() {
    return client("scontrol", "show", "node", node).out().lines().map(String::strip)
        .filter(l -> l.startsWith("State=")).map(l -> l.substring("State=".length()).split(" ")[0]).findFirst().orElse("?");
  }

  /** The reason Slurm shows for the node's state, or "" for none. */
  public String reason() {
    return client("scontrol", "show", "node", node).out().lines().map(String::strip)
        .filter(l -> l.startsWith("Reason=")).map(l -> l.substring("Reason=".length())).findFirst().orElse("");
  }

  /** Submits {@code script} with sbatch (the node to itself) and returns the job's id at once. */
  public String submit(Path script, String... options) {
    return sbatch(false, script, options);
  }

  /** Waits until the job is neither pending nor running (its epilog may still run). */
  public void awaitEnd(String jobId) {
    Eventually.until(() -> "job " + jobId + " to end: " + client("scontrol", "show", "job", jobId).out() + logs(),
        Duration.ofSeconds(120), () -> {
          String out = client("scontrol", "-o", "show", "job", jobId).out();
          return !out.contains("JobState=PENDING") && !out.contains("JobState=RUNNING") && !out.contains("JobState=CONFIGURING");
        });
  }

  /** Submits {@code script} with sbatch (the node to itself), waits for the job to end, and returns its id. */
  public String sbatchAndWait(Path script, String... options) {
    return sbatch(true, script, options);
  }

  private String sbatch(boolean wait, Path script, String... options) {
    List<String> cmd = new ArrayList<>(List.of("sbatch", "--parsable", "--exclusive", "-D", jobs().toString(),
        "-o", jobs().resolve("slurm-%j.out").toString()));
    if (wait) {
      cmd.add("--wait");
    }
    cmd.addAll(List.of(options));
    cmd.add(script.toString());
    Cmd.Result r = client(cmd.toArray(String[]::new));
    if (r.status() != 0) {
      throw new AssertionError("sbatch failed (" + r.status() + "): " + r.err() + r.out() + "\n" + logs());
    }
    return r.out().strip().split(";")[0];
  }

  /** What a job printed. */
  public String output(String jobId) {
    try {
      return Files.readString(jobs().resolve("slurm-" + jobId + ".out"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The ends of the daemons' logs, for a failure message. */
  public String logs() {
    StringBuilder b = new StringBuilder();
    for (String f : List.of("log/slurmctld.log", "log/slurmd.log", "slurmctld.out", "slurmd.out", "munged.out")) {
      try {
        List<String> lines = Files.readAllLines(dir.resolve(f));
        b.append("== ").append(f).append('\n');
        lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(l -> b.append(l).append('\n'));
      } catch (IOException e) {
        // not written (yet)
      }
    }
    return b.toString();
  }

  /** Ends slurmd, slurmctld and munged (in that order) and whatever they started, by pid. */
  @Override
  public void close() {
    List<ProcessHandle> started = new ArrayList<>();
    for (Process p : daemons) {
      p.toHandle().descendants().forEach(started::add);
    }
    for (int i = daemons.size() - 1; i >= 0; i--) {
      Process p = daemons.get(i);
      p.destroy();
      try {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (ProcessHandle h : started) {
      h.destroyForcibly();
      h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> h).join();
    }
  }
}
