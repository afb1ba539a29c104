package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Who gets a connection slot on the advice socket: per user, shared, and root's own. */
class ClientSlotsTest {
  private static final Peer ROOT = new Peer("root", true);
  private static final Peer NOBODY = new Peer("nobody", false);
  private static final Peer ALICE = new Peer("alice", false);
  private static final Peer BOB = new Peer("bob", false);

  @Test
  void oneUserGetsNoMoreThanItsShareAndTheOthersStillGetIn() {
    ClientSlots slots = new ClientSlots(8, 2, 1);

    assertThat(slots.take(NOBODY)).isNull();
    assertThat(slots.take(NOBODY)).isNull();
    assertThat(slots.take(NOBODY)).isEqualTo("nobody already has 2 connections open, the most one user may; try again");
    assertThat(slots.take(ALICE)).isNull();
    assertThat(slots.take(ROOT)).isNull();
  }

  @Test
  void ordinaryUsersTogetherNeverTakeRootsOwnSlots() {
    ClientSlots slots = new ClientSlots(2, 1, 2);
    assertThat(slots.take(NOBODY)).isNull();
    assertThat(slots.take(ALICE)).isNull();

    assertThat(slots.take(BOB)).isEqualTo("all 2 connections for ordinary users are in use; try again");
    assertThat(slots.take(ROOT)).isNull();
    assertThat(slots.take(ROOT)).isNull();
    assertThat(slots.take(ROOT)).isEqualTo("all 4 connections are in use; try again");
  }

  @Test
  void rootUsesFreeSharedSlotsAndOrdinaryUsersWaitForThem() {
    ClientSlots slots = new ClientSlots(2, 2, 1);
    for (int i = 0; i < 3; i++) {
      assertThat(slots.take(ROOT)).isNull();
    }

    assertThat(slots.take(NOBODY)).startsWith("all 2 connections for ordinary users are in use");
    slots.give(ROOT);
    assertThat(slots.take(NOBODY)).isNull();
  }

  @Test
  void aSlotGivenBackCanBeTakenAgain() {
    ClientSlots slots = new ClientSlots(4, 1, 1);
    assertThat(slots.take(NOBODY)).isNull();
    slots.give(NOBODY);

    assertThat(slots.take(NOBODY)).isNull();
    assertThat(slots.inUse()).isEqualTo(1);
  }

  @Test
  void limitsMustBePositive() {
    assertThatThrownBy(() -> new ClientSlots(0, 1, 1)).hasMessageContaining("shared 0");
  }
}
