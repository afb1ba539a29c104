package org.shmguard.doctor;

import java.util.List;

/**
 * One diagnosis the doctor runs: it reads what it needs from the context and returns what it
 * found, an empty list meaning "nothing wrong". A check that cannot run here says so with an
 * info finding rather than failing; an exception it throws is reported as a failed check and
 * never stops the others (as a failing node_exporter collector does not fail the scrape).
 */
public interface Check {
  /** A short stable name, as the report lists the checks it ran: "shm-size", "logind". */
  String name();

  List<Finding> run(DoctorContext context) throws Exception;
}
