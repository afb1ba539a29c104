package org.shmguard.gpu;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The NVIDIA kernel driver's version ("560.35.03"), as /proc/driver/nvidia/version shows it, and
 * the newest CUDA version that driver serves.
 *
 * <pre>{@code
 * DriverVersion d = DriverVersion.fromProcText(Files.readString(Path.of("/proc/driver/nvidia/version")));
 * d.cuda();   // 12.6
 * }</pre>
 */
public record DriverVersion(int branch, int minor, int patch) {
  private static final Pattern TEXT = Pattern.compile("(\\d{3,4})\\.(\\d+)(?:\\.(\\d+))?");
  /** "NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 ...": the first x.y(.z) after "Module". */
  private static final Pattern PROC_LINE = Pattern.compile("NVRM version:.*?Module\\s+(?:for\\s+\\S+\\s+)?(\\d{3,4}\\.\\d+(?:\\.\\d+)?)");

  /**
   * The first driver branch of each CUDA release, from NVIDIA's CUDA Toolkit release notes, table
   * "CUDA Toolkit and Corresponding Driver Versions" (Linux, GA releases): 12.0 needs 525, 12.1
   * 530, 12.2 535, 12.3 545, 12.4 550, 12.5 555, 12.6 560, 12.8 570, 12.9 575, 13.0 580. Only the
   * branch is compared: a beta of a branch is counted with its GA.
   */
  private static final int[][] BRANCH_TO_CUDA = {
    {580, 13, 0}, {575, 12, 9}, {570, 12, 8}, {560, 12, 6}, {555, 12, 5}, {550, 12, 4},
    {545, 12, 3}, {535, 12, 2}, {530, 12, 1}, {525, 12, 0}, {520, 11, 8}, {515, 11, 7},
    {510, 11, 6}, {495, 11, 5}, {470, 11, 4}, {465, 11, 3}, {460, 11, 2}, {455, 11, 1}, {450, 11, 0},
  };

  public DriverVersion {
    if (branch <= 0 || minor < 0 || patch < 0) {
      throw new IllegalArgumentException("not an NVIDIA driver version: " + branch + "." + minor + "." + patch);
    }
  }

  /** Parses "560.35.03" or "560.35"; throws IllegalArgumentException saying the expected form. */
  public static DriverVersion parse(String text) {
    Matcher m = TEXT.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("\"" + text + "\" is not an NVIDIA driver version such as 560.35.03");
    }
    return new DriverVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
        m.group(3) == null ? 0 : Integer.parseInt(m.group(3)));
  }

  /** The version in the text of /proc/driver/nvidia/version, or null when it names none. */
  public static DriverVersion fromProcText(String text) {
    Matcher m = PROC_LINE.matcher(text == null ? "" : text);
    return m.find() ? parse(m.group(1)) : null;
  }

  /** The newest CUDA version this driver serves; null for a branch older than CUDA 11.0. */
  public CudaVersion cuda() {
    for (int[] row : BRANCH_TO_CUDA) {
      if (branch >= row[0]) {
        return CudaVersion.of(row[1], row[2]);
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return patch == 0 ? branch + "." + minor : String.format("%d.%d.%02d", branch, minor, patch);
  }
}
