package org.shmguard.model;

/**
 * What one pass left unexamined over the whole host, beside each mount's own counts
 * ({@link MountContents#unexamined()}): the memory bound is global, so a pass says what it did
 * not look at and why.
 *
 * <pre>{@code
 * Coverage c = snapshot.coverage();
 * if (!c.isComplete()) { log(c.describe(unexamined)); }
 * }</pre>
 *
 * @param examineTotal reap.examineTotal: the most files the pass could keep over all mounts
 * @param kept the files it kept (segments), at most twice {@code examineTotal} (as many held or
 *     hard-linked ones apart)
 * @param reportOnlyMounts mounts shown that shmguard only reports: measured (statvfs), never listed
 * @param reportOnlyFiles what their statvfs counts as used inodes, less each root: files shmguard
 *     did not examine there (hard links to one file count once)
 * @param namespacesLeftOut namespaces owned by other user namespaces beyond namespaces.reportLimit:
 *     counted, their mounts not looked at
 * @param reportLimit namespaces.reportLimit
 */
public record Coverage(int examineTotal, int kept, int reportOnlyMounts, long reportOnlyFiles, int namespacesLeftOut,
    int reportLimit) {

  public Coverage {
    if (examineTotal < 1 || kept < 0 || reportOnlyMounts < 0 || reportOnlyFiles < 0 || namespacesLeftOut < 0
        || reportLimit < 0) {
      throw new IllegalArgumentException("examineTotal is at least 1 and every count is not negative: examineTotal "
          + examineTotal + ", kept " + kept + ", reportOnlyMounts " + reportOnlyMounts + ", reportOnlyFiles "
          + reportOnlyFiles + ", namespacesLeftOut " + namespacesLeftOut + ", reportLimit " + reportLimit);
    }
  }

  /** For snapshots built without a budget (fixtures): nothing left out. */
  public static Coverage none(int kept) {
    return new Coverage(Math.max(1, kept), kept, 0, 0, 0, 0);
  }

  /** Whether every mount found was listed and every namespace looked at (files beyond a share aside). */
  public boolean everyMountListed() {
    return reportOnlyMounts == 0 && namespacesLeftOut == 0;
  }

  /**
   * One sentence on what the pass did not examine, or null when it examined everything:
   * {@code unexamined} is the sum of the listed mounts' {@link MountContents#unexamined()}.
   */
  public String describe(long unexamined) {
    StringBuilder sb = new StringBuilder();
    if (unexamined > 0) {
      sb.append(unexamined).append(unexamined == 1 ? " file" : " files")
          .append(" with reapable names beyond this pass's share (reap.examineLimit per mount, reap.examineTotal ")
          .append(examineTotal).append(" over all) wait for a later pass");
    }
    if (reportOnlyMounts > 0) {
      sb.append(sb.length() == 0 ? "" : "; ").append(reportOnlyMounts)
          .append(reportOnlyMounts == 1 ? " mount shmguard only reports was" : " mounts shmguard only reports were")
          .append(" measured, not listed (").append(reportOnlyFiles).append(reportOnlyFiles == 1 ? " file" : " files")
          .append(" not examined)");
    }
    if (namespacesLeftOut > 0) {
      sb.append(sb.length() == 0 ? "" : "; ").append(namespacesLeftOut)
          .append(namespacesLeftOut == 1 ? " namespace" : " namespaces")
          .append(" of other user namespaces left out, beyond namespaces.reportLimit (").append(reportLimit).append(')');
    }
    return sb.length() == 0 ? null : sb.toString();
  }
}
