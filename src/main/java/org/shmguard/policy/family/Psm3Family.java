package org.shmguard.policy.family;

/**
 * Intel PSM3's intra-node segments: {@code psm3_shm.<uid>.<epid>.<n>} (ptl_am/am_reqrep_shmem.c,
 * amsh_init_segment: "/psm3_shm.%ld.%s.%d" of getuid(), the endpoint id and a retry counter;
 * older releases run uid and epid together). Each endpoint creates its own and peers map it;
 * PSM3 ships psm3_shm_cleanup for what a killed job leaves. Its {@code psm3_shm.ze_sock2.*}
 * names are Unix sockets, which shmguard never lists.
 */
public final class Psm3Family extends HeldForLife {
  @Override
  public String name() {
    return "psm3";
  }

  @Override
  public String producer() {
    return "Intel PSM3 (libfabric psm3 provider), shared-memory endpoints";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("psm3_shm.") && fileName.length() > "psm3_shm.".length();
  }

  @Override
  public String pattern() {
    return "psm3_shm.*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    return "psm";
  }

  @Override
  public String source() {
    return "intel/eth-psm3 (libfabric prov/psm3) ptl_am/am_reqrep_shmem.c (amsh_init_segment), psm3_shm_cleanup";
  }
}
