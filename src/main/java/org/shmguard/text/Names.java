package org.shmguard.text;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Shows a raw file name to a person: UTF-8 where it is, with control and undecodable bytes escaped. */
public final class Names {
  private Names() {}

  public static String display(byte[] name) {
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(name))
          .toString();
    } catch (CharacterCodingException e) {
      return escapeBytes(name);
    }
    StringBuilder sb = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\') {
        sb.append("\\\\");
      } else if (c < 0x20 || c == 0x7f) {
        sb.append(String.format("\\x%02x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  private static String escapeBytes(byte[] name) {
    StringBuilder sb = new StringBuilder(name.length + 8);
    for (byte b : name) {
      int v = b & 0xff;
      if (v == '\\') {
        sb.append("\\\\");
      } else if (v < 0x20 || v >= 0x7f) {
        sb.append(String.format("\\x%02x", v));
      } else {
        sb.append((char) v);
      }
    }
    return sb.toString();
  }
}
