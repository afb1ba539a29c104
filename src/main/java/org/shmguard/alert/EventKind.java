package org.shmguard.alert;

/**
 * Every kind of event the daemon reports, with its journald identity: the SHMGUARD_EVENT value,
 * a fixed MESSAGE_ID (explained in systemd/shmguard.catalog) and a syslog priority.
 */
public enum EventKind {
  SEGMENT_REAPED("segment_reaped", "daffc78e5242459393e7bf74b4792e72", 5),
  SEGMENT_LEAKED("segment_leaked", "3f63d4317f4f4356833db17b11b69724", 4),
  REAP_FAILED("reap_failed", "b9b22be8983042d4ba72f0063f49e8f4", 3),
  CAPACITY_WARNING("capacity_warning", "e01e25730f1c4184ae307fbefd673d0a", 4),
  CAPACITY_CRITICAL("capacity_critical", "c5f6036bf7134a988281453fa71f54c4", 2),
  CAPACITY_OK("capacity_ok", "939bdb31ac3c464ca3b7202617a2679a", 5),
  ALLOCATION_FAILED("allocation_failed", "c08051aa98f6470b9756a5930d041f32", 3),
  SCAN_INCOMPLETE("scan_incomplete", "3fcc27aea58840fab9e4db1ae83a668c", 4),
  MOUNT_ADDED("mount_added", "236d351982404e6d9b4892d8de5a4858", 6),
  MOUNT_REMOVED("mount_removed", "a09f03e684d44cf2ad801efce40b0b4f", 6),
  SUMMARY("summary", "dfab499441854ec4b590b4f8518c3162", 6),
  REMOUNT_GROWN("remount_grown", "c8d011c3edc44e52a5e7b959860d98a6", 5),
  REMOUNT_REFUSED("remount_refused", "d334f009b14a4e77a397ccb79d857e69", 4),
  REMOUNT_FAILED("remount_failed", "50116415299f40b79bbd5a9e1f195a08", 3),
  METRICS_UNAVAILABLE("metrics_unavailable", "cb73e8cb0dbd46bdbc92d50d32dea89c", 4),
  METRICS_LISTENING("metrics_listening", "6707deba42bf491084fdcc92d4814869", 5),
  TOO_MANY_FILES("too_many_files", "8bda90d0ac6348149f7c04c30ae2e3fc", 4),
  MOUNT_STALLED("mount_stalled", "13c84e68de4345349a8b268344efdadc", 4),
  PASS_STALLED("pass_stalled", "5fa9c51f142649bda4b676ed3ddb28a3", 3),
  CONFIG_RELOADED("config_reloaded", "d390b54893214825b8da400724f1ddf2", 5),
  CONFIG_REJECTED("config_rejected", "cb46f56e4fd348bda1d7e05f24331bf4", 3);

  private final String label;
  private final String messageId;
  private final int priority;

  EventKind(String label, String messageId, int priority) {
    this.label = label;
    this.messageId = messageId;
    this.priority = priority;
  }

  /** The SHMGUARD_EVENT value. */
  public String label() {
    return label;
  }

  public String messageId() {
    return messageId;
  }

  /** syslog(3) priority: 2 critical, 3 error, 4 warning, 5 notice, 6 info. */
  public int priority() {
    return priority;
  }
}
