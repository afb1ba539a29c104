package org.shmguard.policy.family;

/**
 * Open MPI's shared-memory transport: {@code vader_segment.<node>.<jobid hex>.<local rank>}
 * (btl/vader, 4.x: "vader_segment.%s.%x.%d"; 3.x without the jobid) and
 * {@code sm_segment.<node>.<euid>.<jobid hex>.<node rank>} (btl/sm, 5.x:
 * "sm_segment.%s.%u.%x.%d"), in btl_{vader,sm}_backing_directory (/dev/shm when it exists).
 * Each rank creates its own segment and maps its peers'; the launcher removes them at the end of
 * the job (opal_pmix_register_cleanup), and a killed launcher leaves them (ompi #7220: 100,000
 * of them).
 */
public final class OpenMpiFamily extends HeldForLife {
  @Override
  public String name() {
    return "openMpi";
  }

  @Override
  public String producer() {
    return "Open MPI shared-memory BTL (vader in 3.x/4.x, sm in 5.x)";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("vader_segment.") || fileName.startsWith("sm_segment.");
  }

  @Override
  public String pattern() {
    return "vader_segment.* sm_segment.*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "open-mpi";
  }

  @Override
  public String source() {
    return "open-mpi/ompi opal/mca/btl/vader/btl_vader_component.c (4.x), opal/mca/btl/sm/btl_sm_component.c (5.x)";
  }
}
