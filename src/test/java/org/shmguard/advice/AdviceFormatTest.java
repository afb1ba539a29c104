package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.policy.Advice;
import org.shmguard.policy.MountSpace;

class AdviceFormatTest {
  private static Advice advice(String mountName, String reason, List<String> assumptions) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("NCCL_SHM_DISABLE", "1");
    Map<String, Long> numbers = new LinkedHashMap<>();
    numbers.put("freeBytes", 67_108_864L);
    numbers.put("needBytes", Long.MAX_VALUE);
    return new Advice(Advice.Action.SHM_DISABLE, new MountSpace(mountName, "0:25", 1L << 30, 1L << 26, 0), env, reason,
        numbers, assumptions);
  }

  @Test
  void jsonIsOneDocumentOnOneLineWithEveryFieldAJsonReaderSees() throws Exception {
    String text = AdviceFormat.json(advice("/dev/shm", "the SHM buffers do not fit", List.of("8 local ranks")));

    assertThat(text).endsWith("}\n").doesNotContain("\n{").hasLineCount(1);
    JsonNode doc = new ObjectMapper().readTree(text);
    assertThat(doc.get("version").asInt()).isEqualTo(1);
    assertThat(doc.get("action").asText()).isEqualTo("shm-disable");
    assertThat(doc.get("mount").get("name").asText()).isEqualTo("/dev/shm");
    assertThat(doc.get("mount").get("dev").asText()).isEqualTo("0:25");
    assertThat(doc.get("env").get("NCCL_SHM_DISABLE").asText()).isEqualTo("1");
    assertThat(doc.get("reason").asText()).isEqualTo("the SHM buffers do not fit");
    assertThat(doc.get("numbers").get("freeBytes").asLong()).isEqualTo(67_108_864L);
    assertThat(doc.get("numbers").get("needBytes").asLong()).isEqualTo(Long.MAX_VALUE);
    assertThat(doc.get("assumptions").get(0).asText()).isEqualTo("8 local ranks");
  }

  @Test
  void quotesBackslashesAndControlCharactersInAMountNameCannotBreakTheDocument() throws Exception {
    String hostile = "/pods/x\"},\"action\":\"none\\\u0001\u001b[2J\ty";
    String text = AdviceFormat.json(advice(hostile, "r", List.of("a\"b")));

    assertThat(text).hasLineCount(1);
    JsonNode doc = new ObjectMapper().readTree(text);
    assertThat(doc.get("mount").get("name").asText()).isEqualTo(hostile);
    assertThat(doc.get("action").asText()).isEqualTo("shm-disable");
    assertThat(doc.get("assumptions").get(0).asText()).isEqualTo("a\"b");
  }
}
