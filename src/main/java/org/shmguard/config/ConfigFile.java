package org.shmguard.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.shmguard.nativ.SmallFiles;

/**
 * A configuration file's text, read within {@link ConfigLimits}: a regular file (a FIFO or a
 * device at the path is refused at once, never waited on), at most {@link ConfigLimits#MAX_BYTES}
 * (never read past the limit), UTF-8, and, when shmguard runs as root, owned by root and
 * writable by nobody else: root must not take its orders from a file another user can change.
 */
final class ConfigFile {
  private ConfigFile() {}

  static String read(Path file) throws ConfigException {
    String source = file.toString();
    SmallFiles.Contents contents;
    try {
      contents = SmallFiles.readAtMost(source, ConfigLimits.MAX_BYTES);
    } catch (NoSuchFileException e) {
      throw new ConfigException(source, 0, null, "no such file");
    } catch (SmallFiles.NotARegularFileException e) {
      throw new ConfigException(source, 0, null, "this path leads to " + e.kind()
          + ", which shmguard does not read; allowed: " + ConfigLimits.ALLOWED_FILE);
    } catch (AccessDeniedException e) {
      throw new ConfigException(source, 0, null, "cannot read: permission denied");
    } catch (IOException e) {
      throw new ConfigException(source, 0, null, "cannot read: " + e.getMessage());
    }
    if (SmallFiles.effectiveUid() == 0) {
      requireOnlyRootCanWrite(source, contents);
    }
    byte[] bytes = contents.bytes();
    if (bytes.length > ConfigLimits.MAX_BYTES) {
      throw YamlReader.tooLarge(source, lineAt(bytes, ConfigLimits.MAX_BYTES));
    }
    return decode(source, bytes);
  }

  private static void requireOnlyRootCanWrite(String source, SmallFiles.Contents c) throws ConfigException {
    String allowed = "; allowed: a file owned by root that only root can write (chown root; chmod go-w)";
    if (c.ownerUid() != 0) {
      throw new ConfigException(source, 0, null, "the file is owned by uid " + c.ownerUid()
          + ", who could change what shmguard, running as root, does" + allowed);
    }
    if ((c.permissions() & 022) != 0) {
      throw new ConfigException(source, 0, null, "the file is writable by " + ((c.permissions() & 002) != 0 ? "every user" : "its group")
          + " (mode " + String.format("%04o", c.permissions()) + "), who could change what shmguard, running as root, does" + allowed);
    }
  }

  /** Strict UTF-8: a byte that is not valid UTF-8 is named with its line, not replaced. */
  private static String decode(String source, byte[] bytes) throws ConfigException {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CharBuffer out = CharBuffer.allocate(bytes.length);
    CoderResult result = decoder.decode(in, out, true);
    if (!result.isError()) {
      result = decoder.flush(out);
    }
    if (result.isError()) {
      int at = in.position();
      throw new ConfigException(source, lineAt(bytes, at), null, String.format("byte 0x%02x is not UTF-8 text; allowed: %s",
          bytes[Math.min(at, bytes.length - 1)] & 0xff, ConfigLimits.ALLOWED_TEXT));
    }
    out.flip();
    String text = out.toString();
    return text.startsWith("\uFEFF") ? text.substring(1) : text; // a byte-order mark some editors write
  }

  /** The 1-based line that byte {@code offset} lies on. */
  private static int lineAt(byte[] bytes, int offset) {
    int line = 1;
    for (int i = 0; i < offset && i < bytes.length; i++) {
      line += bytes[i] == '\n' ? 1 : 0;
    }
    return line;
  }
}
