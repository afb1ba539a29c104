package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.policy.RememberedHolders;

/**
 * The text of holders.json: what it encodes comes back exactly (raw names, long texts cut), it
 * stays within its size bound, and decoding refuses, each with its reason, anything but what it
 * writes for this boot and PID namespace. (The file on disk is HolderStateTest's.)
 */
class HolderStateFormatTest {
  private static final String BOOT = "6b0e5f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  private static final String PIDNS = "pid:[4026531836]";
  private static final HolderStateFormat FORMAT = new HolderStateFormat(BOOT, PIDNS);
  private static final byte[] RAW_NAME = {'n', 'c', 'c', 'l', '-', (byte) 0xff, '\n', 0x01};

  @Test
  void whatItEncodesComesBackWithRawNamesAndLongTextsCut() throws Exception {
    String longCommand = "python3 " + "x".repeat(400);
    RememberedHolders r = RememberedHolders.of(List.of(new RememberedHolders.Entry(Dev.of(0, 300), 912, 7, RAW_NAME,
        1_764_151_200_123_456_789L, List.of(new ProcessInfo(4242, longCommand, 1000, "alice", null, 987_654)))));

    byte[] text = FORMAT.encode(r);

    assertThat(new String(text, StandardCharsets.UTF_8)).startsWith("{\"format\":\"shmguard-holders/1\"")
        .containsPattern("\nsha256:[0-9a-f]{64}\n$");
    RememberedHolders.Entry back = FORMAT.decode(text).entries().get(0);
    assertThat(back.mountDev()).isEqualTo(Dev.of(0, 300));
    assertThat(back.name()).isEqualTo(RAW_NAME);
    assertThat(back.ino()).isEqualTo(7);
    assertThat(back.holders()).containsExactly(new ProcessInfo(4242, longCommand.substring(0, 256), 1000, "alice", null, 987_654));
  }

  @Test
  void aFileTooLargeKeepsTheFirstEntriesThatFit() throws Exception {
    List<RememberedHolders.Entry> many = new ArrayList<>();
    String big = "y".repeat(256);
    for (int i = 0; i < 12_000; i++) {
      many.add(new RememberedHolders.Entry(Dev.of(0, 61), 912, i + 1, ("nccl-" + i).getBytes(StandardCharsets.UTF_8), i,
          List.of(new ProcessInfo(100 + i, big, 1000, big, big, i))));
    }

    byte[] text = FORMAT.encode(RememberedHolders.of(many));

    assertThat(text.length).isLessThanOrEqualTo(HolderStateFormat.MAX_BYTES);
    List<RememberedHolders.Entry> back = FORMAT.decode(text).entries();
    assertThat(back).hasSizeBetween(1, 11_999);
    assertThat(back.get(0).ino()).isEqualTo(1);
  }

  @Test
  void anythingButWhatItWritesForThisBootAndNamespaceIsRefusedWithItsReason() throws Exception {
    String body = body(FORMAT.encode(RememberedHolders.none()));

    assertThatThrownBy(() -> FORMAT.decode(body.getBytes(StandardCharsets.UTF_8))).hasMessage("no checksum at its end (a write cut short?)");
    assertThatThrownBy(() -> FORMAT.decode((body.replace("[]", "[ ]") + "\nsha256:" + sha256(body) + "\n").getBytes(StandardCharsets.UTF_8)))
        .hasMessage("its checksum does not match its content (changed since shmguard wrote it)");
    assertThatThrownBy(() -> FORMAT.decode(signed(body.replace("shmguard-holders/1", "shmguard-holders/2"))))
        .hasMessage("format \"shmguard-holders/2\", not shmguard-holders/1");
    assertThatThrownBy(() -> FORMAT.decode(signed(body.replace(BOOT, "00000000-0000-4000-8000-000000000000"))))
        .isInstanceOf(HolderStateFormat.Foreign.class);
    assertThatThrownBy(() -> FORMAT.decode(signed(body.replace(PIDNS, "pid:[1]"))))
        .isNotInstanceOf(HolderStateFormat.Foreign.class)
        .hasMessage("written in PID namespace pid:[1], not pid:[4026531836]: its pids name other processes here");
    assertThatThrownBy(() -> FORMAT.decode(signed(body.replace("\"segments\":[]", "\"segments\":{}"))))
        .hasMessage("no list of segments");
  }

  @Test
  void everyFieldOfASegmentAndItsHoldersIsChecked() throws Exception {
    String one = body(FORMAT.encode(RememberedHolders.of(List.of(new RememberedHolders.Entry(Dev.of(0, 61), 912, 3,
        "nccl-A".getBytes(StandardCharsets.UTF_8), 5, List.of(new ProcessInfo(4242, "python3", 1000, "alice", "pod:x", 99)))))));

    assertThatThrownBy(() -> FORMAT.decode(signed(one.replace("\"pid\":4242", "\"pid\":\"4242\""))))
        .hasMessage("pid is not a whole number");
    assertThatThrownBy(() -> FORMAT.decode(signed(one.replace("\"pid\":4242", "\"pid\":4294967296"))))
        .hasMessage("pid is out of range");
    assertThatThrownBy(() -> FORMAT.decode(signed(one.replace("\"user\":\"alice\"", "\"user\":\"" + "a".repeat(257) + "\""))))
        .hasMessage("user is not a text of at most 256 characters");
    assertThatThrownBy(() -> FORMAT.decode(signed(one.replace("\"ino\":3", "\"ino\":3.5"))))
        .hasMessage("ino is not a whole number");
    assertThatThrownBy(() -> FORMAT.decode(signed(one.replaceFirst("\"holders\":\\[\\{[^}]*\\}\\]", "\"holders\":null"))))
        .hasMessage("a segment without holders");
  }

  private static String body(byte[] text) {
    String s = new String(text, StandardCharsets.UTF_8);
    return s.substring(0, s.lastIndexOf("\nsha256:"));
  }

  private static byte[] signed(String body) throws Exception {
    return (body + "\nsha256:" + sha256(body) + "\n").getBytes(StandardCharsets.UTF_8);
  }

  private static String sha256(String body) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
  }
}
