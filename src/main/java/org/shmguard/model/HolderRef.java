package org.shmguard.model;

/**
 * One process holding one file, as the /proc pass found it.
 *
 * @param path the path the kernel reported, relative to the holder's root, "(deleted)" included
 * @param deleted whether the kernel marked the path as unlinked
 * @param bytes for a mapping, the mapped length; for an fd, the file size where known, else 0
 */
public record HolderRef(int pid, Access access, String path, boolean deleted, long bytes) {}
