package org.shmguard.advice;

/** Who is on the other end of a connection, from SO_PEERCRED: a user name (or uid) and whether it is root. */
public record Peer(String user, boolean root) {}
