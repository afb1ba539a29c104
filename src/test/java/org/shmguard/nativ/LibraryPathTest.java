package org.shmguard.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.NativeLibrary;
import org.junit.jupiter.api.Test;

class LibraryPathTest {
  @Test
  void anOperatorsValueIsKeptAndAMissingOneIsSetWithoutLdconfig() {
    String before = System.getProperty(LibraryPath.PROPERTY);
    try {
      System.setProperty(LibraryPath.PROPERTY, "/opt/mine");
      LibraryPath.withoutLdconfig();
      assertThat(System.getProperty(LibraryPath.PROPERTY)).isEqualTo("/opt/mine");

      System.clearProperty(LibraryPath.PROPERTY);
      LibraryPath.withoutLdconfig();
      assertThat(System.getProperty(LibraryPath.PROPERTY)).contains("/usr/lib64").contains("/usr/lib/x86_64-linux-gnu");
    } finally {
      if (before == null) {
        System.clearProperty(LibraryPath.PROPERTY);
      } else {
        System.setProperty(LibraryPath.PROPERTY, before);
      }
    }
  }

  @Test
  void theLibrariesShmguardLoadsNeedNoSearchPath() {
    // libc by JNA's own name for it, libsystemd by the versioned name LibSystemd falls back to.
    assertThat(NativeLibrary.getInstance("c")).isNotNull();
    assertThat(NativeLibrary.getInstance("libsystemd.so.0").getFunction("sd_journal_sendv")).isNotNull();
  }
}
