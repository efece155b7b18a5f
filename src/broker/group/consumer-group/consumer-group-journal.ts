/**
 * How a consumer group's state reaches `__consumer_offsets` and comes back from it.
 *
 * The journal keeps, per group, the last value it wrote for each record key
 * (consumer-group-records.ts): what compaction will leave of the group. After every
 * change of a group (a heartbeat, a member fenced, a group deleted) the coordinator
 * asks for `changes`: the group's records as they should be now, compared with what was
 * written, give the records to append, as Kafka's GroupMetadataManager emits them —
 * tombstones first in descending record type (current assignment, target assignment,
 * target assignment epoch, member metadata, subscription metadata, group epoch: the
 * order of Kafka's createGroupTombstoneRecords, so a member's assignment goes before
 * the member and the group goes last), then new values in the order of a heartbeat
 * (member metadata, subscription metadata, group epoch, target assignment members,
 * target assignment epoch, current member assignments). A group that did not change
 * yields nothing.
 *
 * Loading replays records in log order into the same last-value-per-key map, a
 * tombstone removing its key, so the result does not depend on how compaction
 * interleaved them; `loadedGroups` then builds each group from its surviving records.
 * After a restart members keep their epochs and assignments but must heartbeat within
 * their session timeout (the coordinator starts their timers on load, as Kafka's
 * onLoaded does).
 *
 * Timers, sessions and partition owners are not records: the coordinator rebuilds them.
 * Single-threaded: owned by the ConsumerGroupCoordinator on the broker thread.
 */
import type { Message } from '../../../protocol/codec.ts';
import { fromTopicPartitions, type TopicImage, toTopicPartitions } from './assignment.ts';
import { ConsumerGroup, type ConsumerMember } from './consumer-group.ts';
import {
  CONSUMER_GROUP_RECORD_TYPES,
  type ConsumerGroupRecordKind,
  decodeConsumerGroupKey,
  decodeConsumerGroupValue,
  encodeConsumerGroupKey,
  encodeConsumerGroupValue,
  memberStateCode,
  memberStateOf,
} from './consumer-group-records.ts';

/** One record to append: a null value is a tombstone. */
export interface JournalRecord {
  key: Buffer;
  value: Buffer | null;
}

interface Entry {
  kind: ConsumerGroupRecordKind;
  key: Buffer;
  value: Buffer;
}

/** Writes go in heartbeat order; tombstones in descending record type. */
const WRITE_ORDER: readonly ConsumerGroupRecordKind[] = [
  'memberMetadata',
  'partitionMetadata',
  'metadata',
  'targetAssignmentMember',
  'targetAssignmentMetadata',
  'currentMemberAssignment',
];

/** A group's records as they should be stored now, keyed by the key's hex. */
function recordsOf(group: ConsumerGroup): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const put = (kind: ConsumerGroupRecordKind, memberId: string | null, value: Message) => {
    const key = encodeConsumerGroupKey(kind, group.groupId, memberId);
    out.set(key.toString('hex'), { kind, key, value: encodeConsumerGroupValue(kind, value) });
  };
  put('metadata', null, { epoch: group.groupEpoch });
  put('partitionMetadata', null, {
    topics: [...group.subscriptionMetadata]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((t) => ({
        topicId: t.topicId,
        topicName: t.name,
        numPartitions: t.partitions,
        // Racks per partition: a single node has none, stored as Kafka stores "unknown".
        partitionMetadata: [],
      })),
  });
  put('targetAssignmentMetadata', null, { assignmentEpoch: group.assignmentEpoch });
  for (const [memberId, target] of group.targetAssignment) {
    put('targetAssignmentMember', memberId, { topicPartitions: toTopicPartitions(target) });
  }
  for (const m of group.members.values()) {
    put('memberMetadata', m.memberId, {
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: m.subscribedTopicNames,
      subscribedTopicRegex: m.subscribedTopicRegex,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      serverAssignor: m.serverAssignor,
      classicMemberMetadata: null,
    });
    put('currentMemberAssignment', m.memberId, {
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: memberStateCode(m.state),
      assignedPartitions: toTopicPartitions(m.assigned),
      partitionsPendingRevocation: toTopicPartitions(m.pendingRevocation),
    });
  }
  return out;
}

export class ConsumerGroupJournal {
  /** group id -> key hex -> the value last written (or loaded) for that key. */
  private readonly written = new Map<string, Map<string, Entry>>();

  /**
   * The records that bring the store from what was written to `group` (undefined: the
   * group is gone, so every key it has gets a tombstone); remembered as written.
   */
  changes(groupId: string, group: ConsumerGroup | undefined): JournalRecord[] {
    const before = this.written.get(groupId) ?? new Map<string, Entry>();
    const after = group ? recordsOf(group) : new Map<string, Entry>();
    const tombstones = [...before]
      .filter(([k]) => !after.has(k))
      .map(([, e]) => e)
      .sort((a, b) => CONSUMER_GROUP_RECORD_TYPES[b.kind] - CONSUMER_GROUP_RECORD_TYPES[a.kind]);
    const writes = [...after]
      .filter(([k, e]) => !before.get(k)?.value.equals(e.value))
      .map(([, e]) => e)
      .sort((a, b) => WRITE_ORDER.indexOf(a.kind) - WRITE_ORDER.indexOf(b.kind));
    if (after.size > 0) this.written.set(groupId, after);
    else this.written.delete(groupId);
    return [
      ...tombstones.map((e) => ({ key: e.key, value: null })),
      ...writes.map((e) => ({ key: e.key, value: e.value })),
    ];
  }

  // ---- Loading ------------------------------------------------------------------------

  /**
   * One record read back from the store, in log order: `other` when its key is not a
   * consumer group record, `malformed` when its value does not decode (it is left out).
   */
  replay(keyBytes: Buffer, value: Buffer | null): 'applied' | 'malformed' | 'other' {
    const key = decodeConsumerGroupKey(keyBytes);
    if (!key) return 'other';
    let entries = this.written.get(key.groupId);
    const hex = keyBytes.toString('hex');
    if (value === null) {
      entries?.delete(hex);
      if (entries?.size === 0) this.written.delete(key.groupId);
      return 'applied';
    }
    if (decodeConsumerGroupValue(key.kind, value) === undefined) return 'malformed';
    if (!entries) {
      entries = new Map();
      this.written.set(key.groupId, entries);
    }
    entries.set(hex, { kind: key.kind, key: Buffer.from(keyBytes), value: Buffer.from(value) });
    return 'applied';
  }

  /** The groups the replayed records describe, each built from its surviving records. */
  loadedGroups(defaultAssignor: string): ConsumerGroup[] {
    return [...this.written].map(([groupId, entries]) => {
      const group = new ConsumerGroup(groupId, defaultAssignor);
      const members = new Map<string, ConsumerMember>();
      const memberOf = (memberId: string) => {
        let m = members.get(memberId);
        if (!m) {
          m = blankMember(memberId);
          members.set(memberId, m);
        }
        return m;
      };
      for (const e of entries.values()) {
        const key = decodeConsumerGroupKey(e.key)!;
        const v = decodeConsumerGroupValue(e.kind, e.value)!;
        switch (key.kind) {
          case 'metadata':
            group.groupEpoch = v.epoch;
            break;
          case 'partitionMetadata':
            group.setSubscriptionMetadata(
              (v.topics as Message[]).map(
                (t): TopicImage => ({
                  name: t.topicName,
                  topicId: t.topicId,
                  partitions: t.numPartitions,
                }),
              ),
            );
            break;
          case 'targetAssignmentMetadata':
            group.assignmentEpoch = v.assignmentEpoch;
            break;
          case 'targetAssignmentMember':
            group.targetAssignment.set(key.memberId!, fromTopicPartitions(v.topicPartitions));
            break;
          case 'memberMetadata': {
            const m = memberOf(key.memberId!);
            m.instanceId = v.instanceId;
            m.rackId = v.rackId;
            m.clientId = v.clientId;
            m.clientHost = v.clientHost;
            m.subscribedTopicNames = v.subscribedTopicNames;
            m.subscribedTopicRegex = v.subscribedTopicRegex;
            m.rebalanceTimeoutMs = v.rebalanceTimeoutMs;
            m.serverAssignor = v.serverAssignor;
            break;
          }
          case 'currentMemberAssignment': {
            const m = memberOf(key.memberId!);
            m.memberEpoch = v.memberEpoch;
            m.previousMemberEpoch = v.previousMemberEpoch;
            // Kafka's UNKNOWN state (or a newer one) is reconciled afresh from STABLE.
            m.state = memberStateOf(v.state) ?? 'STABLE';
            m.assigned = fromTopicPartitions(v.assignedPartitions);
            m.pendingRevocation = fromTopicPartitions(v.partitionsPendingRevocation);
            break;
          }
        }
      }
      for (const m of members.values()) {
        group.addMember(m);
        group.setReconciled(m, {
          state: m.state,
          memberEpoch: m.memberEpoch,
          assigned: m.assigned,
          pendingRevocation: m.pendingRevocation,
        });
      }
      return group;
    });
  }
}

function blankMember(memberId: string): ConsumerMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignor: null,
    state: 'STABLE',
    memberEpoch: 0,
    previousMemberEpoch: 0,
    assigned: new Map(),
    pendingRevocation: new Map(),
  };
}
