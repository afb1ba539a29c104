package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PackageVersionTest {
  @Test
  void buildInfoNamesTheVersionAsThePackagesDo() {
    assertThat(ShmMetrics.packageVersion("0.1.0-SNAPSHOT")).isEqualTo("0.1.0~SNAPSHOT");
    assertThat(ShmMetrics.packageVersion("0.1.0")).isEqualTo("0.1.0");
  }
}
