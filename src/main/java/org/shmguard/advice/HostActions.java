package org.shmguard.advice;

import org.shmguard.model.ContainerStart;
import org.shmguard.model.ShmMount;

/**
 * What root may ask the daemon to do over the socket. The server checks the peer before calling
 * either; an implementation only acts and says what happened, in one line.
 */
public interface HostActions {
  /** Grow {@code mount}, to {@code sizeBytes} or (null) the configured target. */
  String remount(ShmMount mount, Long sizeBytes) throws ProtocolException;

  /** Run a clean pass now; {@code dryRun} only reports. */
  String clean(boolean dryRun) throws ProtocolException;

  /**
   * Size a starting container's /dev/shm for its GPUs (the OCI hook's PREPARE): the one line
   * saying what was done when it now holds what they need; an error saying why when it does not.
   * A server that does not size containers says so.
   */
  default String prepare(ContainerStart start) throws ProtocolException {
    throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server does not size containers");
  }

  /**
   * Read the configuration again and apply it (RELOAD, as SIGHUP does): the one line the journal
   * has for it when it is applied; an error ({@code rejected}) with the file, line and key when it
   * is not, the running configuration kept.
   */
  default String reload() throws ProtocolException {
    throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server has no configuration to reload");
  }

  /** For a server that offers advice only: every action is unavailable. */
  static HostActions none() {
    return new HostActions() {
      @Override
      public String remount(ShmMount mount, Long sizeBytes) throws ProtocolException {
        throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server does not remount");
      }

      @Override
      public String clean(boolean dryRun) throws ProtocolException {
        throw new ProtocolException(ProtocolException.UNAVAILABLE, "this server does not clean");
      }
    };
  }
}
