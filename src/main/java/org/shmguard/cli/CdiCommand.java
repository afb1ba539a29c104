package org.shmguard.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Callable;
import org.shmguard.advice.CdiSpec;
import org.shmguard.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code shmguard cdi generate}: the CDI spec that gives containers the advice socket. */
@Command(name = "cdi", description = "Container Device Interface (CDI) specs for containers.",
    subcommands = {CdiCommand.Generate.class})
final class CdiCommand {

  @Command(name = "generate", description = "Write the CDI spec of the device shmguard.io/advice=socket: the advice "
      + "socket's directory mounted read-only and SHMGUARD_ADVICE_SOCKET set, for `podman run --device "
      + "shmguard.io/advice=socket` (or Docker 25+ with CDI on, containerd, CRI-O). The socket is the configuration's "
      + "advice.socket. Put it in /etc/cdi/ (or /var/run/cdi/).",
      footer = {"", "Example: shmguard cdi generate --output /etc/cdi/shmguard.yaml", "",
          "Exit status: 0 written, 1 the file could not be written, 78 bad configuration."})
  static final class Generate implements Callable<Integer> {
    @Mixin CommonOptions common;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE",
        description = "Write the spec to FILE (replaced whole, mode 0644) instead of standard output; the packages use /etc/cdi/shmguard.yaml.")
    Path output;

    @Override
    public Integer call() throws ConfigException {
      String yaml = CdiSpec.yaml(common.loadConfig().advice().socket());
      if (output == null) {
        common.out().print(yaml);
        return Main.EXIT_OK;
      }
      try {
        Path dir = output.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".shmguard-cdi-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        try {
          Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
          Files.move(tmp, output, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
          Files.deleteIfExists(tmp);
        }
      } catch (IOException e) {
        common.spec.commandLine().getErr().println("shmguard: cannot write " + output + ": " + e.getMessage());
        return Main.EXIT_PROBLEM;
      }
      return Main.EXIT_OK;
    }
  }
}
