/**
 * Offsets committed inside a transaction (TxnOffsetCommit) that its marker has not
 * settled yet, by producer id: Kafka's pendingTransactionalOffsetCommits. They are in
 * `__consumer_offsets` already (a transactional batch of the producer), but no
 * OffsetFetch sees them until the COMMIT marker lands there, when they become the
 * group's committed offsets; an ABORT drops them. OffsetFetch with require_stable
 * answers UNSTABLE_OFFSET_COMMIT for a partition that has one pending.
 *
 * Rebuilt at load from the log itself: the transactional offset records, then the
 * markers that follow them (offsets-topic-store.ts).
 *
 * Single-threaded, on the broker thread, owned by the GroupCoordinator.
 */
import type { StoredOffset } from './group-coordinator.ts';

export type PendingOffset = StoredOffset & { groupId: string };

export class PendingTxnOffsets {
  /** producer id -> "group\0topic\0partition" -> the latest pending offset. */
  private readonly byProducer = new Map<number, Map<string, PendingOffset>>();

  add(producerId: number, offset: PendingOffset): void {
    let pending = this.byProducer.get(producerId);
    if (!pending) {
      pending = new Map();
      this.byProducer.set(producerId, pending);
    }
    pending.set(`${offset.groupId}\u0000${offset.topic}\u0000${offset.partition}`, offset);
  }

  /** Removes and returns what the producer's transaction left pending. */
  take(producerId: number): PendingOffset[] {
    const pending = this.byProducer.get(producerId);
    this.byProducer.delete(producerId);
    return pending ? [...pending.values()] : [];
  }

  /**
   * An offset tombstone for the partition (OffsetDelete, DeleteGroups): what any open
   * transaction left pending for it goes too, as in Kafka's OffsetMetadataManager, so a
   * later COMMIT marker cannot bring a deleted offset back.
   */
  drop(groupId: string, topic: string, partition: number): void {
    const key = `${groupId}\u0000${topic}\u0000${partition}`;
    for (const [producerId, pending] of this.byProducer) {
      pending.delete(key);
      if (pending.size === 0) this.byProducer.delete(producerId);
    }
  }

  /** The partitions the group has an offset pending for, in any transaction. */
  partitionsOf(groupId: string): Array<{ topic: string; partition: number }> {
    const seen = new Map<string, { topic: string; partition: number }>();
    for (const pending of this.byProducer.values()) {
      for (const [key, o] of pending) {
        if (o.groupId === groupId) seen.set(key, { topic: o.topic, partition: o.partition });
      }
    }
    return [...seen.values()];
  }

  /** Every pending offset of the group (the group was deleted). */
  dropGroup(groupId: string): void {
    for (const [producerId, pending] of this.byProducer) {
      for (const [key, o] of pending) if (o.groupId === groupId) pending.delete(key);
      if (pending.size === 0) this.byProducer.delete(producerId);
    }
  }

  has(groupId: string, topic: string, partition: number): boolean {
    const key = `${groupId}\u0000${topic}\u0000${partition}`;
    for (const pending of this.byProducer.values()) if (pending.has(key)) return true;
    return false;
  }
}
