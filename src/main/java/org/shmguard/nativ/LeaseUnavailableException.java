package org.shmguard.nativ;

import java.io.IOException;

/**
 * The kernel would not consider a lease at all (as opposed to refusing one because the file is
 * open elsewhere): fs.leases-enable=0 or a filesystem without leases (EINVAL), another user's file
 * without CAP_LEASE (EACCES), no lock memory (ENOLCK).
 */
public final class LeaseUnavailableException extends IOException {
  LeaseUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
