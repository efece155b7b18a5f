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
 * yields nothing. Only records whose source changed are encoded again (EncodedGroup):
 * a steady heartbeat encodes nothing, one that moves a member encodes that member's
 * records and the group's; the comparison with what was written is still a pass over
 * the group's keys, without encoding.
 *
 * Loading replays records in log order into the same last-value-per-key map, a
 * tombstone removing its key, so the result does not depend on how compaction
 * interleaved them; `loadedGroups` then builds each group from its surviving records.
 * After a restart members keep their epochs and assignments but must heartbeat within
 * their session timeout (the coordinator starts their timers on load, as Kafka's
 * onLoaded does).
 *
 * A member speaking the classic protocol carries its JoinGroup's session timeout and
 * protocols in its member metadata (tag 0, Kafka's ClassicMemberMetadata).
 *
 * Timers, sessions and partition owners are not records: the coordinator rebuilds them.
 * Single-threaded: owned by the ConsumerGroupCoordinator on the broker thread.
 */
import type { Message } from '../../../protocol/codec.ts';
import {
  type Assignment,
  assignmentsEqual,
  fromTopicPartitions,
  type TopicImage,
  toTopicPartitions,
} from './assignment.ts';
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
  /** The key as a map key. */
  hex: string;
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

function entryOf(
  kind: ConsumerGroupRecordKind,
  groupId: string,
  memberId: string | null,
  value: Message,
): Entry {
  const key = encodeConsumerGroupKey(kind, groupId, memberId);
  return { kind, key, hex: key.toString('hex'), value: encodeConsumerGroupValue(kind, value) };
}

/**
 * The entries last encoded for a group, each with what it was encoded from: a heartbeat
 * re-encodes only the records whose source changed (usually the heartbeating member's
 * and the group's), not every member's (O(members) encodings a beat otherwise).
 * Assignments are never mutated in place (reconciliation and assignors build new ones),
 * so an unchanged reference is an unchanged assignment; a new one equal to the old is
 * recognised too.
 */
interface EncodedMember {
  /** The member as its member metadata record was encoded from it. */
  metadataFrom: Pick<ConsumerMember, MetadataField>;
  metadata: Entry;
  /** ... and its current assignment record. */
  currentFrom: Pick<ConsumerMember, CurrentField>;
  current: Entry;
}

type MetadataField =
  | 'instanceId'
  | 'rackId'
  | 'clientId'
  | 'clientHost'
  | 'subscribedTopicNames'
  | 'subscribedTopicRegex'
  | 'rebalanceTimeoutMs'
  | 'serverAssignor'
  | 'classic';
type CurrentField =
  | 'memberEpoch'
  | 'previousMemberEpoch'
  | 'state'
  | 'assigned'
  | 'pendingRevocation';

interface EncodedGroup {
  epoch?: { from: number; entry: Entry };
  subscription?: { from: string; entry: Entry };
  assignmentEpoch?: { from: number; entry: Entry };
  targets: Map<string, { from: Assignment; entry: Entry }>;
  members: Map<string, EncodedMember>;
}

function emptyEncoded(): EncodedGroup {
  return { targets: new Map(), members: new Map() };
}

function sameAssignment(a: Assignment, b: Assignment): boolean {
  return a === b || assignmentsEqual(a, b);
}

function sameMetadata(m: ConsumerMember, was: Pick<ConsumerMember, MetadataField>): boolean {
  const names = m.subscribedTopicNames;
  const wasNames = was.subscribedTopicNames;
  return (
    m.instanceId === was.instanceId &&
    m.rackId === was.rackId &&
    m.clientId === was.clientId &&
    m.clientHost === was.clientHost &&
    m.subscribedTopicRegex === was.subscribedTopicRegex &&
    m.rebalanceTimeoutMs === was.rebalanceTimeoutMs &&
    m.serverAssignor === was.serverAssignor &&
    m.classic === was.classic &&
    (names === wasNames ||
      (names.length === wasNames.length && names.every((n, i) => n === wasNames[i])))
  );
}

function sameCurrent(m: ConsumerMember, was: Pick<ConsumerMember, CurrentField>): boolean {
  return (
    m.memberEpoch === was.memberEpoch &&
    m.previousMemberEpoch === was.previousMemberEpoch &&
    m.state === was.state &&
    sameAssignment(m.assigned, was.assigned) &&
    sameAssignment(m.pendingRevocation, was.pendingRevocation)
  );
}

function encodeMetadata(g: string, m: ConsumerMember): Entry {
  return entryOf('memberMetadata', g, m.memberId, {
    instanceId: m.instanceId,
    rackId: m.rackId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    subscribedTopicNames: m.subscribedTopicNames,
    subscribedTopicRegex: m.subscribedTopicRegex,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    serverAssignor: m.serverAssignor,
    classicMemberMetadata: m.classic
      ? {
          sessionTimeoutMs: m.classic.sessionTimeoutMs,
          supportedProtocols: m.classic.protocols.map((p) => ({
            name: p.name,
            metadata: p.metadata,
          })),
        }
      : null,
  });
}

function encodeCurrent(g: string, m: ConsumerMember): Entry {
  return entryOf('currentMemberAssignment', g, m.memberId, {
    memberEpoch: m.memberEpoch,
    previousMemberEpoch: m.previousMemberEpoch,
    state: memberStateCode(m.state),
    assignedPartitions: toTopicPartitions(m.assigned),
    partitionsPendingRevocation: toTopicPartitions(m.pendingRevocation),
  });
}

/** A group's records as they should be stored now, keyed by the key's hex. */
function recordsOf(group: ConsumerGroup, encoded: EncodedGroup): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const g = group.groupId;
  if (encoded.epoch?.from !== group.groupEpoch) {
    encoded.epoch = {
      from: group.groupEpoch,
      entry: entryOf('metadata', g, null, { epoch: group.groupEpoch }),
    };
  }
  out.set(encoded.epoch.entry.hex, encoded.epoch.entry);
  if (encoded.subscription?.from !== group.subscribedTopicsImage) {
    encoded.subscription = {
      from: group.subscribedTopicsImage,
      entry: entryOf('partitionMetadata', g, null, {
        topics: [...group.subscriptionMetadata]
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          .map((t) => ({
            topicId: t.topicId,
            topicName: t.name,
            numPartitions: t.partitions,
            // Racks per partition: a single node has none, stored as Kafka stores "unknown".
            partitionMetadata: [],
          })),
      }),
    };
  }
  out.set(encoded.subscription.entry.hex, encoded.subscription.entry);
  if (encoded.assignmentEpoch?.from !== group.assignmentEpoch) {
    encoded.assignmentEpoch = {
      from: group.assignmentEpoch,
      entry: entryOf('targetAssignmentMetadata', g, null, {
        assignmentEpoch: group.assignmentEpoch,
      }),
    };
  }
  out.set(encoded.assignmentEpoch.entry.hex, encoded.assignmentEpoch.entry);
  for (const [memberId, target] of group.targetAssignment) {
    let t = encoded.targets.get(memberId);
    // An equal new assignment becomes the reference, so the next pass compares by identity.
    if (t && t.from !== target && assignmentsEqual(t.from, target)) t.from = target;
    if (!t || t.from !== target) {
      t = {
        from: target,
        entry: entryOf('targetAssignmentMember', g, memberId, {
          topicPartitions: toTopicPartitions(target),
        }),
      };
      encoded.targets.set(memberId, t);
    }
    out.set(t.entry.hex, t.entry);
  }
  for (const m of group.members.values()) {
    let e = encoded.members.get(m.memberId);
    if (!e) {
      e = {
        metadataFrom: { ...m },
        metadata: encodeMetadata(g, m),
        currentFrom: { ...m },
        current: encodeCurrent(g, m),
      };
      encoded.members.set(m.memberId, e);
    } else {
      if (!sameMetadata(m, e.metadataFrom)) {
        e.metadataFrom = { ...m };
        e.metadata = encodeMetadata(g, m);
      }
      const was = e.currentFrom;
      const same = sameCurrent(m, was);
      if (!same) e.current = encodeCurrent(g, m);
      // Equal new assignments become the reference too (identity compares next time).
      if (!same || was.assigned !== m.assigned || was.pendingRevocation !== m.pendingRevocation)
        e.currentFrom = { ...m };
    }
    out.set(e.metadata.hex, e.metadata);
    out.set(e.current.hex, e.current);
  }
  // Forget what was encoded for members that are gone (only when some are).
  if (encoded.targets.size > group.targetAssignment.size) {
    for (const id of encoded.targets.keys())
      if (!group.targetAssignment.has(id)) encoded.targets.delete(id);
  }
  if (encoded.members.size > group.members.size) {
    for (const id of encoded.members.keys()) if (!group.members.has(id)) encoded.members.delete(id);
  }
  return out;
}

export class ConsumerGroupJournal {
  /** group id -> key hex -> the value last written (or loaded) for that key. */
  private readonly written = new Map<string, Map<string, Entry>>();
  /** group id -> the entries last encoded for it, with their sources. */
  private readonly encoded = new Map<string, EncodedGroup>();

  /**
   * The records that bring the store from what was written to `group` (undefined: the
   * group is gone, so every key it has gets a tombstone); remembered as written.
   */
  changes(groupId: string, group: ConsumerGroup | undefined): JournalRecord[] {
    const before = this.written.get(groupId) ?? new Map<string, Entry>();
    let encoded = this.encoded.get(groupId);
    if (group && !encoded) {
      encoded = emptyEncoded();
      this.encoded.set(groupId, encoded);
    } else if (!group) {
      this.encoded.delete(groupId);
    }
    const after = group ? recordsOf(group, encoded!) : new Map<string, Entry>();
    // forEach, not spreads: no tuple per record on a heartbeat's path.
    const tombstones: Entry[] = [];
    before.forEach((e, k) => {
      if (!after.has(k)) tombstones.push(e);
    });
    tombstones.sort(
      (a, b) => CONSUMER_GROUP_RECORD_TYPES[b.kind] - CONSUMER_GROUP_RECORD_TYPES[a.kind],
    );
    const writes: Entry[] = [];
    after.forEach((e, k) => {
      const was = before.get(k);
      if (was !== e && !was?.value.equals(e.value)) writes.push(e);
    });
    writes.sort((a, b) => WRITE_ORDER.indexOf(a.kind) - WRITE_ORDER.indexOf(b.kind));
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
    entries.set(hex, {
      kind: key.kind,
      key: Buffer.from(keyBytes),
      hex,
      value: Buffer.from(value),
    });
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
            if (v.classicMemberMetadata) {
              m.classic = {
                sessionTimeoutMs: v.classicMemberMetadata.sessionTimeoutMs,
                protocols: (v.classicMemberMetadata.supportedProtocols as Message[]).map((p) => ({
                  name: p.name,
                  metadata: Buffer.from(p.metadata),
                })),
              };
            } else {
              m.classic = undefined;
            }
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
