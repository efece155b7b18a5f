/**
 * The records of a consumer group (KIP-848) in `__consumer_offsets`, in Kafka 4.0's
 * layout (group-coordinator's ConsumerGroup*Key/Value message definitions), so a data
 * directory reads the same to tools that decode that topic. A key is an int16 record
 * type followed by its fields, non-flexible (int16-length strings); a value is an int16
 * version, 0 for all six, followed by its fields in the flexible encoding (compact
 * strings and arrays, a tagged-field section per struct):
 *
 *   type 3 ConsumerGroupMetadata            key: group        value: epoch
 *   type 4 ConsumerGroupPartitionMetadata   key: group        value: the subscribed
 *          topics (id, name, partition count, racks: always empty, there are none)
 *   type 5 ConsumerGroupMemberMetadata      key: group, member value: instance, rack,
 *          client id and host, subscribed names and regex, rebalance timeout, assignor,
 *          tag 0 classic member metadata (null: the member speaks the consumer protocol)
 *   type 6 ConsumerGroupTargetAssignmentMetadata key: group   value: assignment epoch
 *   type 7 ConsumerGroupTargetAssignmentMember   key: group, member value: partitions
 *   type 8 ConsumerGroupCurrentMemberAssignment  key: group, member value: member epoch,
 *          previous epoch, state (int8 as Kafka's MemberState), assigned partitions,
 *          partitions pending revocation
 *
 * A null value (tombstone) deletes the key. The value schemas are data, compiled by the
 * protocol's one codec; tests hold byte vectors worked out from Kafka's definitions.
 * Pure: no state.
 */
import { compileStruct, type Message, type StructPlan } from '../../../protocol/codec.ts';
import { Reader } from '../../../protocol/reader.ts';
import { array, type FieldSpec, field as f, struct } from '../../../protocol/schema.ts';
import { Writer } from '../../../protocol/writer.ts';
import type { MemberState } from './reconciliation.ts';

export const CONSUMER_GROUP_RECORD_TYPES = {
  metadata: 3,
  partitionMetadata: 4,
  memberMetadata: 5,
  targetAssignmentMetadata: 6,
  targetAssignmentMember: 7,
  currentMemberAssignment: 8,
} as const;

export type ConsumerGroupRecordKind = keyof typeof CONSUMER_GROUP_RECORD_TYPES;

export interface ConsumerGroupKey {
  kind: ConsumerGroupRecordKind;
  groupId: string;
  /** Set for the per-member kinds (5, 7, 8). */
  memberId: string | null;
}

const PER_MEMBER: ReadonlySet<ConsumerGroupRecordKind> = new Set([
  'memberMetadata',
  'targetAssignmentMember',
  'currentMemberAssignment',
]);

const KIND_OF_TYPE = new Map<number, ConsumerGroupRecordKind>(
  Object.entries(CONSUMER_GROUP_RECORD_TYPES).map(([k, t]) => [t, k as ConsumerGroupRecordKind]),
);

export function encodeConsumerGroupKey(
  kind: ConsumerGroupRecordKind,
  groupId: string,
  memberId: string | null = null,
): Buffer {
  const w = new Writer(64);
  w.int16(CONSUMER_GROUP_RECORD_TYPES[kind]);
  w.string(groupId);
  if (PER_MEMBER.has(kind)) {
    if (memberId === null) throw new Error(`a ${kind} key needs a member id`);
    w.string(memberId);
  }
  return w.finish();
}

/** The key if its type is one of the six, else undefined (and undefined when malformed). */
export function decodeConsumerGroupKey(bytes: Buffer): ConsumerGroupKey | undefined {
  const r = new Reader(bytes);
  const kind = KIND_OF_TYPE.get(r.int16());
  if (!r.ok || kind === undefined) return undefined;
  const groupId = r.string();
  const memberId = PER_MEMBER.has(kind) ? r.string() : null;
  return r.ok && r.remaining === 0 ? { kind, groupId, memberId } : undefined;
}

// ---- Values ------------------------------------------------------------------------

const topicPartitions = array([f('topicId', 'uuid', '0+'), f('partitions', array('int32'), '0+')]);

const VALUE_FIELDS: Record<ConsumerGroupRecordKind, readonly FieldSpec[]> = {
  metadata: [f('epoch', 'int32', '0+')],
  partitionMetadata: [
    f(
      'topics',
      array([
        f('topicId', 'uuid', '0+'),
        f('topicName', 'string', '0+'),
        f('numPartitions', 'int32', '0+'),
        f(
          'partitionMetadata',
          array([f('partition', 'int32', '0+'), f('racks', array('string'), '0+')]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
  memberMetadata: [
    f('instanceId', 'string', '0+', { nullable: '0+' }),
    f('rackId', 'string', '0+', { nullable: '0+' }),
    f('clientId', 'string', '0+'),
    f('clientHost', 'string', '0+'),
    f('subscribedTopicNames', array('string'), '0+'),
    f('subscribedTopicRegex', 'string', '0+', { nullable: '0+' }),
    f('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    f('serverAssignor', 'string', '0+', { nullable: '0+' }),
    f(
      'classicMemberMetadata',
      struct([
        f('sessionTimeoutMs', 'int32', '0+'),
        f(
          'supportedProtocols',
          array([f('name', 'string', '0+'), f('metadata', 'bytes', '0+')]),
          '0+',
        ),
      ]),
      '0+',
      { nullable: '0+', default: null, tag: 0 },
    ),
  ],
  targetAssignmentMetadata: [f('assignmentEpoch', 'int32', '0+')],
  targetAssignmentMember: [f('topicPartitions', topicPartitions, '0+')],
  currentMemberAssignment: [
    f('memberEpoch', 'int32', '0+'),
    f('previousMemberEpoch', 'int32', '0+'),
    f('state', 'int8', '0+'),
    f('assignedPartitions', topicPartitions, '0+'),
    f('partitionsPendingRevocation', topicPartitions, '0+'),
  ],
};

const VALUE_VERSION = 0;
const plans = new Map<ConsumerGroupRecordKind, StructPlan>();

function planOf(kind: ConsumerGroupRecordKind): StructPlan {
  let plan = plans.get(kind);
  if (!plan) {
    plan = compileStruct(VALUE_FIELDS[kind], VALUE_VERSION, true);
    plans.set(kind, plan);
  }
  return plan;
}

export function encodeConsumerGroupValue(kind: ConsumerGroupRecordKind, value: Message): Buffer {
  const w = new Writer(128);
  w.int16(VALUE_VERSION);
  planOf(kind).encode(w, value);
  return w.finish();
}

/** The value, or undefined when it is not version 0 or does not decode exactly. */
export function decodeConsumerGroupValue(
  kind: ConsumerGroupRecordKind,
  bytes: Buffer,
): Message | undefined {
  const r = new Reader(bytes);
  if (r.int16() !== VALUE_VERSION || !r.ok) return undefined;
  const value = planOf(kind).decode(r);
  return r.ok && r.remaining === 0 ? value : undefined;
}

/** Kafka's MemberState byte values. */
const MEMBER_STATE_CODES: Record<MemberState, number> = {
  STABLE: 0,
  UNREVOKED_PARTITIONS: 1,
  UNRELEASED_PARTITIONS: 2,
};

export function memberStateCode(state: MemberState): number {
  return MEMBER_STATE_CODES[state];
}

/** The state a stored byte names; Kafka's UNKNOWN (127) or another byte is undefined. */
export function memberStateOf(code: number): MemberState | undefined {
  for (const [state, c] of Object.entries(MEMBER_STATE_CODES))
    if (c === code) return state as MemberState;
  return undefined;
}
