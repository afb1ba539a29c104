package org.shmguard.view;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.testing.GoldenHost;

/**
 * {@code scan --json} as users parse it, whole, against src/test/resources/golden/scan.json: a
 * renamed or dropped field, a changed verdict or reason fails here. After an intended change,
 * {@code mvn test -Dtest=ScanJsonGoldenTest -Dgolden.update=true} rewrites the file; the diff is the
 * review (and docs/commands.md says what changed).
 */
class ScanJsonGoldenTest {
  @Test
  void scanJsonOfTheHandBuiltHostIsTheCheckedInFile() throws Exception {
    String json = ScanOutput.render(GoldenHost.judgement(), ScanSource.local("scan --local"), true);

    assertThat(json).isEqualTo(GoldenHost.golden("scan.json", json));
  }
}
