package org.shmguard.nativ;

/**
 * Where JNA looks for libraries by file name. Unless the {@code jna.platform.library.path}
 * property names them, JNA learns the directories on its first use by running
 * {@code /sbin/ldconfig -p} and parsing its output: a fork and exec in every start, about 60 ms of
 * a daemon's or a command's. shmguard needs none of that: JNA loads libc itself, and libsystemd
 * ({@code libsystemd.so.0}) and NVML ({@code libnvidia-ml.so.1}) are asked for by versioned names
 * the dynamic linker finds through its own cache. The property is set to the directories JNA
 * would list before ldconfig's; one the operator set is kept.
 */
public final class LibraryPath {
  static final String PROPERTY = "jna.platform.library.path";

  private LibraryPath() {}

  /** Sets the property, once, before the first JNA call; keeps a value already there. */
  public static void withoutLdconfig() {
    if (System.getProperty(PROPERTY) == null) {
      System.setProperty(PROPERTY, String.join(":", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
          "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"));
    }
  }
}
