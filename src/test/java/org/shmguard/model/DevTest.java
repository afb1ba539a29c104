package org.shmguard.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The same device number as the kernel writes it in three places. */
class DevTest {

  @Test
  void minorsAbove255DecodeTheSameFromMapsMountinfoAndStDev() {
    Dev fromMaps = Dev.parseHex("00:10a");
    Dev fromMountinfo = Dev.parseDecimal("0:266");
    // glibc's makedev(0, 266): minor low byte in bits 0-7, the rest from bit 20.
    long encoded = (266 & 0xffL) | ((266L & ~0xffL) << 12);
    assertThat(fromMaps).isEqualTo(Dev.of(0, 266)).isEqualTo(fromMountinfo).isEqualTo(Dev.fromEncoded(encoded));
    assertThat(fromMaps.toString()).isEqualTo("0:266");
  }

  @Test
  void largeMajorsAndMinorsRoundTripGlibcEncoding() {
    long major = 4095 + 4096 * 3;
    long minor = 1_000_000;
    long encoded = (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xffL) << 12) | ((major & ~0xfffL) << 32);
    assertThat(Dev.fromEncoded(encoded)).isEqualTo(Dev.of((int) major, (int) minor));
    assertThat(Dev.fromEncoded(0x801)).isEqualTo(Dev.of(8, 1));
  }

  @Test
  void malformedDeviceTextIsRefused() {
    assertThatThrownBy(() -> Dev.parseHex("0010a")).hasMessageContaining("not a major:minor");
    assertThatThrownBy(() -> Dev.parseDecimal("0:")).hasMessageContaining("not a major:minor");
  }
}
