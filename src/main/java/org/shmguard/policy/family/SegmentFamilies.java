package org.shmguard.policy.family;

import java.util.List;

/**
 * The families shmguard knows, in the order a file's name is tried against them. Adding a family
 * is one class and one line here.
 */
public final class SegmentFamilies {
  private static final SegmentFamilies STANDARD = new SegmentFamilies(List.of(
      new NcclFamily(),
      new PytorchFamily(),
      new PythonSharedMemoryFamily(),
      new SglangFamily(),
      new VllmOffloadFamily(),
      new TritonPythonFamily(),
      new OpenMpiFamily(),
      new UcxFamily(),
      new Psm3Family()));

  private final List<SegmentFamily> families;

  private SegmentFamilies(List<SegmentFamily> families) {
    this.families = List.copyOf(families);
  }

  public static SegmentFamilies standard() {
    return STANDARD;
  }

  public List<SegmentFamily> all() {
    return families;
  }

  /** The families an operator configures under {@code families.<name>}: all but NCCL, which reap.* configures. */
  public List<SegmentFamily> configurable() {
    return families.stream().filter(f -> !(f instanceof NcclFamily)).toList();
  }

  /** The family {@code fileName} belongs to, or null. */
  public SegmentFamily of(String fileName) {
    for (SegmentFamily f : families) {
      if (f.matches(fileName)) {
        return f;
      }
    }
    return null;
  }

  /** The family with this configuration name, or null. */
  public SegmentFamily named(String name) {
    for (SegmentFamily f : families) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    return null;
  }
}
