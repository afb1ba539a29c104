package org.shmguard.advice;

import java.util.HashMap;
import java.util.Map;

/**
 * Who may hold a connection to the advice socket: ordinary users share {@code shared} slots, at
 * most {@code perUser} each, and root has {@code rootOnly} more that no ordinary user can take.
 * Root may also use a shared slot that is free. Thread-safe.
 *
 * <pre>{@code
 * ClientSlots slots = new ClientSlots(32, 4, 8);
 * String refusal = slots.take(peer);   // null: admitted, else why not
 * ...
 * slots.give(peer);
 * }</pre>
 */
final class ClientSlots {
  private final int shared;
  private final int perUser;
  private final int rootOnly;
  private final Map<String, Integer> byUser = new HashMap<>();
  private int ordinary;
  private int root;

  ClientSlots(int shared, int perUser, int rootOnly) {
    if (shared < 1 || perUser < 1 || rootOnly < 0) {
      throw new IllegalArgumentException("client slots must be positive: shared " + shared + ", perUser " + perUser
          + ", rootOnly " + rootOnly);
    }
    this.shared = shared;
    this.perUser = perUser;
    this.rootOnly = rootOnly;
  }

  /** Takes a slot for {@code peer}; null when it got one, else the reason it did not (for "ERR v1 busy"). */
  synchronized String take(Peer peer) {
    if (peer.root()) {
      if (root + ordinary >= shared + rootOnly) {
        return "all " + (shared + rootOnly) + " connections are in use; try again";
      }
      root++;
      return null;
    }
    int mine = byUser.getOrDefault(peer.user(), 0);
    if (mine >= perUser) {
      return peer.user() + " already has " + mine + " connections open, the most one user may; try again";
    }
    if (ordinary >= shared || root + ordinary >= shared + rootOnly) {
      return "all " + shared + " connections for ordinary users are in use; try again";
    }
    byUser.put(peer.user(), mine + 1);
    ordinary++;
    return null;
  }

  /** Gives back the slot {@link #take} gave {@code peer}. */
  synchronized void give(Peer peer) {
    if (peer.root()) {
      root--;
      return;
    }
    int mine = byUser.getOrDefault(peer.user(), 0);
    if (mine <= 1) {
      byUser.remove(peer.user());
    } else {
      byUser.put(peer.user(), mine - 1);
    }
    ordinary--;
  }

  /** Connections held now, root's included. */
  synchronized int inUse() {
    return root + ordinary;
  }

  int capacity() {
    return shared + rootOnly;
  }
}
