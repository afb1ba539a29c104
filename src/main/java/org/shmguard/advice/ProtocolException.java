package org.shmguard.advice;

/** A request the server answers with "ERR v1 CODE message" instead of a result. */
public final class ProtocolException extends Exception {
  public static final String BAD_REQUEST = "bad-request";
  public static final String UNSUPPORTED_VERSION = "unsupported-version";
  public static final String TOO_LONG = "too-long";
  public static final String TIMEOUT = "timeout";
  public static final String BUSY = "busy";
  /** The user asked more often than its request rate allows: ask again later, less often. */
  public static final String RATE_LIMITED = "rate-limited";
  public static final String DENIED = "denied";
  public static final String UNKNOWN_MOUNT = "unknown-mount";
  public static final String UNAVAILABLE = "unavailable";
  public static final String FAILED = "failed";
  public static final String REFUSED = "refused";
  /** RELOAD: the configuration read again is invalid; the running one stays. */
  public static final String REJECTED = "rejected";

  private final String code;

  public ProtocolException(String code, String message) {
    super(message);
    this.code = code;
  }

  public String code() {
    return code;
  }

  /** The reply line: "ERR v1 CODE message". */
  public String replyLine() {
    return "ERR " + Request.VERSION + " " + code + " " + getMessage().replace('\n', ' ');
  }
}
