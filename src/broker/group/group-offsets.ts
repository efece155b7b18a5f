/**
 * The committed offsets of every group (Kafka's GroupMetadataManager offset cache):
 * commit, fetch, delete, expiry after offsets.retention.minutes, and loading from the
 * __consumer_offsets topic at start-up.
 *
 * Offsets live on their Group (group.ts) in the coordinator's map of groups, which
 * this class shares: a commit from a consumer that uses no group management creates
 * its group here, and expiry removes a group left with neither members nor offsets.
 * Whether a member may commit (generation, member id, fencing) is the coordinator's
 * check (group-coordinator.ts), made before `commit` is called.
 *
 * Durability: a commit is acknowledged only after the GroupStore has written it, and
 * the in-memory offsets change only then, so a fetch never returns an offset that a
 * broker restart could lose.
 *
 * Single-threaded, like the coordinator: broker thread handlers and timers only.
 */
import type { Clock } from '../../util/clock.ts';
import { type CommittedOffset, Group, type GroupError } from './group.ts';
import type { GroupStore, OffsetCommitEntry, StoredOffset } from './group-coordinator.ts';

export interface GroupOffsetsOptions {
  clock: Clock;
  store?: GroupStore;
  /** offsets.retention.minutes, in ms. */
  offsetsRetentionMs: number;
  /** offset.metadata.max.bytes */
  maxMetadataBytes: number;
}

const NO_OFFSET = {
  offset: -1,
  leaderEpoch: -1,
  metadata: '',
  commitTimestamp: -1,
  logOffset: -1,
} as const;

export class GroupOffsets {
  /** Without a store there is no log: write order stands in for the position in it. */
  private writes = 0;

  constructor(
    private readonly groups: Map<string, Group>,
    private readonly options: GroupOffsetsOptions,
  ) {}

  /** Stores the offsets of a commit the coordinator has allowed; one error per entry. */
  async commit(group: Group, offsets: OffsetCommitEntry[]): Promise<GroupError[]> {
    const { errors, accepted } = this.validate(offsets);
    if (accepted.length > 0) {
      const store = this.options.store;
      const logOffset = store
        ? await store.storeOffsets(group.groupId, accepted)
        : this.unstoredPosition();
      // As Kafka's onOffsetCommitAppend: never over one written later (a concurrent
      // commit whose append resolved first).
      for (const o of accepted) {
        const current = group.offsets.get(Group.offsetKey(o.topic, o.partition));
        if (current === undefined || current.logOffset < logOffset) {
          this.restore(group.groupId, { ...o, logOffset });
        }
      }
    }
    return errors;
  }

  /** The position of a write when there is no store (tests, a coordinator without one). */
  unstoredPosition(): number {
    return this.writes++;
  }

  /**
   * One error per entry (metadata within offset.metadata.max.bytes, else
   * OFFSET_METADATA_TOO_LARGE) and the accepted entries, stamped with the commit time.
   */
  validate(offsets: OffsetCommitEntry[]): {
    errors: GroupError[];
    accepted: Array<OffsetCommitEntry & { commitTimestamp: number }>;
  } {
    const now = this.options.clock.now();
    const errors: GroupError[] = [];
    const accepted: Array<OffsetCommitEntry & { commitTimestamp: number }> = [];
    for (const o of offsets) {
      if (o.metadata !== null && Buffer.byteLength(o.metadata) > this.options.maxMetadataBytes) {
        errors.push('OFFSET_METADATA_TOO_LARGE');
      } else {
        errors.push('NONE');
        accepted.push({ ...o, commitTimestamp: now });
      }
    }
    return { errors, accepted };
  }

  /** Committed offsets of a group: all of them when `partitions` is null. */
  fetch(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }> | null,
  ): Array<{ topic: string; partition: number } & CommittedOffset> {
    const group = this.groups.get(groupId);
    if (partitions === null) return group ? [...group.offsets.values()] : [];
    return partitions.map(
      ({ topic, partition }) =>
        group?.offsets.get(Group.offsetKey(topic, partition)) ?? { topic, partition, ...NO_OFFSET },
    );
  }

  /** OffsetDelete: only for partitions the group is not consuming. */
  async delete(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }>,
  ): Promise<{ error: GroupError; partitions: GroupError[] }> {
    const group = this.groups.get(groupId);
    if (!group) return { error: 'GROUP_ID_NOT_FOUND', partitions: [] };
    if (group.state !== 'Empty' && group.protocolType !== 'consumer') {
      return { error: 'NON_EMPTY_GROUP', partitions: [] };
    }
    const subscribed =
      group.state === 'Empty' ? new Set<string>() : (group.subscribedTopics() ?? new Set());
    const errors = partitions.map(
      (p) => (subscribed.has(p.topic) ? 'GROUP_SUBSCRIBED_TO_TOPIC' : 'NONE') as GroupError,
    );
    const removable = partitions.filter((_, i) => errors[i] === 'NONE');
    if (removable.length > 0) {
      await this.options.store?.removeOffsets(groupId, removable);
      for (const p of removable) group.offsets.delete(Group.offsetKey(p.topic, p.partition));
    }
    return { error: 'NONE', partitions: errors };
  }

  /** Drops offsets of groups that have been empty longer than offsets.retention.minutes. */
  async expire(): Promise<number> {
    const now = this.options.clock.now();
    const retention = this.options.offsetsRetentionMs;
    let expired = 0;
    for (const group of this.groups.values()) {
      if (group.state !== 'Empty' || now - group.emptySince < retention) continue;
      const stale = [...group.offsets.values()].filter((o) => now - o.commitTimestamp >= retention);
      if (stale.length === 0) continue;
      await this.options.store?.removeOffsets(group.groupId, stale);
      for (const o of stale) group.offsets.delete(Group.offsetKey(o.topic, o.partition));
      expired += stale.length;
      if (group.offsets.size === 0 && group.members.size === 0) {
        this.groups.delete(group.groupId);
        await this.options.store?.removeGroup(group.groupId);
      }
    }
    return expired;
  }

  /** An offset read back from the store (or just stored): the group is created if needed. */
  restore(groupId: string, o: StoredOffset): void {
    let group = this.groups.get(groupId);
    if (!group) {
      group = new Group(groupId, o.commitTimestamp);
      this.groups.set(groupId, group);
    }
    group.offsets.set(Group.offsetKey(o.topic, o.partition), {
      topic: o.topic,
      partition: o.partition,
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: o.commitTimestamp,
      logOffset: o.logOffset,
    });
  }

  /** An offset tombstone read back from the store. */
  removeRestored(groupId: string, topic: string, partition: number): void {
    this.groups.get(groupId)?.offsets.delete(Group.offsetKey(topic, partition));
  }
}
