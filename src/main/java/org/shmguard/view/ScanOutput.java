package org.shmguard.view;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.shmguard.policy.Judgement;

/**
 * What {@code shmguard scan} prints, text or JSON, for a judgement and where it came from: the one
 * renderer of a local scan and of the daemon's answer to SCAN, so the two cannot drift apart.
 * JSON gets {@code "source"} first; text from the daemon gets {@link ScanSource#line} first,
 * a local scan's text nothing more.
 *
 * <pre>{@code
 * out.print(ScanOutput.render(judgement, ScanSource.local("--local"), true));
 * }</pre>
 */
public final class ScanOutput {
  private ScanOutput() {}

  /** {@code scan --json}'s document: the source, then the fields of {@link ScanView}. */
  record Sourced(ScanSource source, @JsonUnwrapped ScanView scan) {}

  public static String render(Judgement j, ScanSource source, boolean json) {
    if (json) {
      return Json.write(new Sourced(source, ScanView.of(j, source.daemon()))) + "\n";
    }
    String text = ScanText.scan(j, source.daemon());
    return source.daemon() ? source.line() + "\n" + text : text;
  }
}
