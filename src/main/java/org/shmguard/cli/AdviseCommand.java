package org.shmguard.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviseRequest;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.JobShape;
import org.shmguard.policy.MountSpace;
import org.shmguard.host.NvidiaProc;
import org.shmguard.advice.ProtocolException;
import org.shmguard.config.Config;
import org.shmguard.host.ProcessConfinement;
import org.shmguard.model.Dev;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.gpu.NcclVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "advise", mixinStandardHelpOptions = true,
    description = {"Say what an NCCL job should set before it starts, for the /dev/shm this command sees: nothing,"
        + " NCCL_CUMEM_HOST_ENABLE=1, NCCL_SHM_DISABLE=1, or that the tmpfs must grow, with the reason and the numbers.",
        "Asks the daemon over its socket; when no daemon answers, works it out here from /dev/shm alone and says so."},
    footer = {"", "Exit status: 0 advice printed, 1 no advice (the daemon refused, or --daemon-only and no daemon), 2 usage,"
        + " 75 no advice with --daemon-only because this user asked the daemon too often (rate-limited), 78 bad"
        + " configuration."})
final class AdviseCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--local-ranks", paramLabel = "N", description = "Ranks of the job on this host (default: one per GPU of the host).")
  Integer localRanks;

  @Option(names = "--nccl-version", paramLabel = "V", description = "The NCCL release the job loads, such as 2.21.5.")
  String ncclVersion;

  @Option(names = "--nodes", paramLabel = "N",
      description = "Hosts the job spans; more than 1 means NCCL's network transport and its proxy ops pools (default: sized for whichever needs more).")
  Integer nodes;

  @Option(names = "--p2p", paramLabel = "yes|no",
      description = "Whether every pair of the job's GPUs here has CUDA P2P (NVLink or PCIe); no on consumer cards (default: sized without).")
  String p2p;

  @Option(names = "--processes", paramLabel = "N",
      description = "Processes the job's local ranks live in: 1 when one process drives every GPU (default: one per rank).")
  Integer processes;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "env",
      description = "env (KEY=VALUE lines, for shells) or json (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(names = "--socket", paramLabel = "PATH", description = "The daemon's socket (default: $SHMGUARD_ADVICE_SOCKET, else"
      + " advice.socket of the configuration).")
  Path socket;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "2s",
      description = "How long to wait for the daemon (default: ${DEFAULT-VALUE}).")
  String timeout;

  @Option(names = "--daemon-only", description = "Do not work the advice out here when the daemon does not answer: exit 1.")
  boolean daemonOnly;

  @Option(names = "--shm", paramLabel = "DIR", defaultValue = "/dev/shm", hidden = true,
      description = "The tmpfs to ask about (default: ${DEFAULT-VALUE}).")
  String shmPath;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (!format.equals("env") && !format.equals("json")) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--format must be env or json, not \"" + format + "\"");
    }
    JobShape shape = shape();
    Duration wait = duration(timeout);
    Config config = common.loadConfig();
    String fromEnv = System.getenv("SHMGUARD_ADVICE_SOCKET");
    Path sock = socket != null ? socket : fromEnv != null && !fromEnv.isEmpty() ? Path.of(fromEnv) : config.advice().socket();
    Dev dev = ownShmDev();
    String why;
    int daemonOnlyStatus = Main.EXIT_PROBLEM;
    try {
      common.out().print(askCompatibly(sock, shape, dev, wait));
      common.out().flush();
      return Main.EXIT_OK;
    } catch (ProtocolException e) {
      if (e.code().equals(ProtocolException.RATE_LIMITED)) {
        why = "the daemon limits how often one user may ask, and refused this request (rate-limited): " + e.getMessage();
        daemonOnlyStatus = Main.EXIT_TEMPFAIL;
      } else if (e.code().equals(ProtocolException.UNKNOWN_MOUNT) || e.code().equals(ProtocolException.UNAVAILABLE)) {
        why = "the daemon cannot advise on " + shmPath + " (" + e.getMessage() + ")";
      } else {
        spec.commandLine().getErr().println("shmguard: the daemon answered: " + e.code() + ": " + e.getMessage());
        return Main.EXIT_PROBLEM;
      }
    } catch (IOException e) {
      why = "no daemon answers on " + sock + " (" + e.getMessage() + ")";
    }
    if (daemonOnly) {
      spec.commandLine().getErr().println("shmguard: " + why);
      return daemonOnlyStatus;
    }
    spec.commandLine().getErr().println("shmguard: " + why + "; advice worked out here from " + shmPath
        + " alone, without the daemon's view of leaked segments");
    common.out().print(local(config, new AdviseRequest(shape, dev, format)).text());
    common.out().flush();
    return Main.EXIT_OK;
  }

  /**
   * Asks with every key known; a daemon older than the keys nodes, p2p, procs and numa refuses
   * them ("ADVISE takes no ..."), and is asked again with the first ones only.
   */
  private String askCompatibly(Path sock, JobShape shape, Dev dev, Duration wait) throws IOException, ProtocolException {
    try {
      return AdviceClient.ask(sock, new AdviseRequest(shape, dev, format).line(true), wait);
    } catch (ProtocolException e) {
      if (!e.code().equals(ProtocolException.BAD_REQUEST) || !e.getMessage().contains("takes no")) {
        throw e;
      }
      spec.commandLine().getErr().println("shmguard: the daemon is older than --nodes, --p2p, --processes and the"
          + " container's NUMA check; asked without them");
      return AdviceClient.ask(sock, new AdviseRequest(shape, dev, format).line(false), wait);
    }
  }

  /**
   * The job, with whether this process (started in the job's container) may make the NUMA calls
   * of cuMem host memory: it shares the job's seccomp filter and bounding set.
   */
  private JobShape shape() {
    if (p2p != null && !p2p.equals("yes") && !p2p.equals("no")) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--p2p must be yes or no, not \"" + p2p + "\"");
    }
    try {
      ProcessConfinement self = ProcessConfinement.read(Path.of("/proc/self/status"));
      return new JobShape(localRanks, ncclVersion == null ? null : NcclVersion.parse(ncclVersion), nodes,
          p2p == null ? null : p2p.equals("yes"), processes, self == null ? null : self.numaPolicyAllowed());
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private Duration duration(String text) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(ms|s)").matcher(text);
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--timeout must be a duration such as 500ms or 2s, not \"" + text + "\"");
    }
    long n = Long.parseLong(m.group(1));
    return m.group(2).equals("ms") ? Duration.ofMillis(n) : Duration.ofSeconds(n);
  }

  /** The device of the tmpfs at /dev/shm here: what tells the daemon which mount this caller sees. */
  private Dev ownShmDev() {
    try {
      StatxResult st = Linux.get().stat(shmPath);
      return Dev.of(st.devMajor(), st.devMinor());
    } catch (IOException e) {
      return null;
    }
  }

  /** The advice worked out here, by the same path as the daemon's, from this tmpfs's room alone (no leaks known). */
  private AdviseRequest.Answer local(Config config, AdviseRequest q) throws IOException {
    FsUsage u = Linux.get().statvfs(shmPath);
    MountSpace space = new MountSpace(shmPath, q.dev() == null ? "?" : q.dev().toString(), u.sizeBytes(), u.availableBytes(), 0);
    return q.answer(new AdviceEngine(config.advice().defaultLocalRanks()), space, NvidiaProc.read(common.hostPaths()));
  }
}
