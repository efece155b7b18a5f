/**
 * The online migration of a group between the classic protocol and the consumer
 * protocol (KIP-848), as Kafka 4.0's group coordinator does it under
 * `group.consumer.migration.policy`:
 *
 * - upgrade (policy upgrade or bidirectional): the first ConsumerGroupHeartbeat for a
 *   classic group with members whose protocol type is `consumer` turns it into a
 *   consumer group (ConsumerGroup.fromClassicGroup): each classic member becomes a member
 *   that still speaks the classic protocol, at member epoch = the generation, STABLE, its
 *   subscription read from its JoinGroup metadata for the group's protocol and its
 *   assigned partitions (and target) from its SyncGroup assignment. The group epoch and
 *   the assignment epoch are the generation; the joining member then bumps the epoch.
 *   A group of another protocol type (`connect`), or whose metadata does not decode,
 *   stays classic and the heartbeat answers GROUP_ID_NOT_FOUND, as Kafka does; a group
 *   in the middle of a rebalance is converted too, its waiting members answered
 *   REBALANCE_IN_PROGRESS (Kafka's convertToConsumerGroup).
 * - downgrade (policy downgrade or bidirectional): when a member leaves a consumer
 *   group (or is fenced) and every member left speaks the classic protocol, the group
 *   becomes a classic group again (ClassicGroup.fromConsumerGroup): generation = the
 *   group epoch, protocol chosen by the members' votes, each member's assignment its
 *   target assignment in ConsumerProtocol format, then a rebalance is started.
 *
 * The embedded formats: ConsumerProtocolSubscription v0-v3 (topics, user data, v1 owned
 * partitions, v2 generation, v3 rack) and ConsumerProtocolAssignment, whose layout is the
 * same in every version (only the version number differs): an assignment is written in
 * the version of the member's subscription, as Kafka does.
 * Pure: no state; the coordinators apply what these functions build.
 */
import {
  CONSUMER_PROTOCOL_TYPE,
  ConsumerProtocolError,
  decodeAssignment,
  encodeAssignment,
  type TopicPartitions,
} from '../../../protocol/consumer-protocol.ts';
import { Reader } from '../../../protocol/reader.ts';
import type { Group, Member } from '../group.ts';
import { type Assignment, addPartition, emptyAssignment, type TopicImage } from './assignment.ts';
import { ASSIGNORS } from './assignors.ts';
import { ConsumerGroup, type ConsumerMember } from './consumer-group.ts';

export type MigrationPolicy = 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional';

export function upgradeEnabled(policy: MigrationPolicy): boolean {
  return policy === 'upgrade' || policy === 'bidirectional';
}

export function downgradeEnabled(policy: MigrationPolicy): boolean {
  return policy === 'downgrade' || policy === 'bidirectional';
}

/** ConsumerProtocolAssignment's highest version (Kafka 4.0). */
const MAX_CONSUMER_PROTOCOL_VERSION = 3;

export interface DecodedSubscription {
  version: number;
  topics: string[];
  /** v1+; empty for v0 (an eager member owns nothing when it joins). */
  ownedPartitions: TopicPartitions[];
  /** v3+. */
  rackId: string | null;
}

/** A ConsumerProtocolSubscription of any version; throws ConsumerProtocolError when malformed. */
export function decodeSubscription(bytes: Buffer): DecodedSubscription {
  const r = new Reader(bytes);
  const version = r.int16();
  const topics: string[] = [];
  const count = r.int32();
  for (let i = 0; i < count && r.ok; i++) topics.push(r.string());
  r.nullableBytes();
  const ownedPartitions: TopicPartitions[] = [];
  let rackId: string | null = null;
  if (version >= 1) {
    const n = r.int32();
    for (let i = 0; i < n && r.ok; i++) {
      const topic = r.string();
      const ps: number[] = [];
      const m = r.int32();
      for (let j = 0; j < m && r.ok; j++) ps.push(r.int32());
      ownedPartitions.push({ topic, partitions: ps });
    }
  }
  if (version >= 2) r.int32();
  if (version >= 3) rackId = r.nullableString();
  if (!r.ok || version < 0 || count < 0)
    throw new ConsumerProtocolError('the member subscription is malformed');
  return { version, topics, ownedPartitions, rackId };
}

/** The version a subscription's bytes carry (0 when there are none). */
function versionOf(metadata: Buffer): number {
  return metadata.length >= 2 ? metadata.readInt16BE(0) : 0;
}

/** Partitions by topic name to an assignment by topic id; unknown topics are left out. */
export function assignmentByIds(
  partitions: readonly TopicPartitions[],
  topics: readonly TopicImage[],
): Assignment {
  const ids = new Map(topics.map((t) => [t.name, t.topicId]));
  const out = emptyAssignment();
  for (const tp of partitions) {
    const id = ids.get(tp.topic);
    if (id === undefined) continue;
    for (const p of tp.partitions) addPartition(out, id, p);
  }
  return out;
}

/**
 * An assignment in ConsumerProtocolAssignment format, in the version of the
 * subscription `metadata` (capped at the highest Kafka knows); topics that no longer
 * exist are left out.
 */
export function encodeAssignmentFor(
  assignment: Assignment,
  topics: readonly TopicImage[],
  metadata: Buffer,
): Buffer {
  const names = new Map(topics.map((t) => [t.topicId, t.name]));
  const byName: TopicPartitions[] = [];
  for (const [topicId, ps] of [...assignment].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const name = names.get(topicId);
    if (name !== undefined && ps.size > 0)
      byName.push({ topic: name, partitions: [...ps].sort((a, b) => a - b) });
  }
  const bytes = encodeAssignment(byName);
  // Every version has v0's layout; only the number at the front differs.
  bytes.writeInt16BE(Math.min(Math.max(versionOf(metadata), 0), MAX_CONSUMER_PROTOCOL_VERSION), 0);
  return bytes;
}

/**
 * Kafka's ConsumerGroup.fromClassicGroup: the consumer group a classic `consumer`
 * group becomes. Throws ConsumerProtocolError when a member's metadata or assignment
 * does not decode (the group then stays classic).
 */
export function consumerGroupFromClassic(
  classic: Group,
  topics: readonly TopicImage[],
  defaultAssignor: string,
): ConsumerGroup {
  const group = new ConsumerGroup(classic.groupId, defaultAssignor);
  const generation = classic.generationId;
  group.groupEpoch = generation;
  group.assignmentEpoch = generation;
  const protocolName = classic.protocolName ?? classic.selectProtocol();
  for (const m of classic.members.values()) {
    const subscription = decodeSubscription(classic.metadataFor(m, protocolName));
    const assigned = assignmentByIds(decodeAssignment(m.assignment), topics);
    const member: ConsumerMember = {
      memberId: m.memberId,
      instanceId: m.groupInstanceId,
      rackId: subscription.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      subscribedTopicNames: [...new Set(subscription.topics)].sort(),
      subscribedTopicRegex: null,
      serverAssignor: null,
      state: 'STABLE',
      memberEpoch: generation,
      previousMemberEpoch: generation,
      assigned: emptyAssignment(),
      pendingRevocation: emptyAssignment(),
      classic: {
        sessionTimeoutMs: m.sessionTimeoutMs,
        protocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
      },
    };
    group.addMember(member);
    group.targetAssignment.set(m.memberId, assigned);
    group.setReconciled(member, {
      state: 'STABLE',
      memberEpoch: generation,
      assigned,
      pendingRevocation: emptyAssignment(),
    });
  }
  return group;
}

/**
 * Kafka's validateOnlineUpgrade and convertToConsumerGroup for a ConsumerGroupHeartbeat
 * (`memberEpoch`) naming a classic group with members: the consumer group it becomes,
 * or why it stays classic (answered GROUP_ID_NOT_FOUND).
 */
export function upgradeOf(
  classic: Group,
  memberEpoch: number,
  policy: MigrationPolicy,
  topics: readonly TopicImage[],
): { group: ConsumerGroup } | { refusal: string } {
  const id = classic.groupId;
  // Only a joining member (epoch 0) may create, hence convert, a group.
  if (memberEpoch !== 0) return { refusal: `Group ${id} is not a consumer group.` };
  if (!upgradeEnabled(policy)) {
    return {
      refusal: `Group ${id} is not a consumer group: it is a classic group with members, and its online upgrade is disabled (group.consumer.migration.policy=${policy}).`,
    };
  }
  if (classic.protocolType !== CONSUMER_PROTOCOL_TYPE)
    return { refusal: `Group ${id} is not a consumer group.` };
  try {
    return { group: consumerGroupFromClassic(classic, topics, ASSIGNORS[0]!.name) };
  } catch (err) {
    if (!(err instanceof ConsumerProtocolError)) throw err;
    return {
      refusal: `Cannot upgrade the classic group ${id} to consumer group because the embedded consumer protocol is malformed.`,
    };
  }
}

/** Whether every member but those leaving speaks the classic protocol, and some remain. */
export function onlyClassicMembersRemain(group: ConsumerGroup, leaving: ReadonlySet<string>) {
  let remaining = 0;
  for (const m of group.members.values()) {
    if (leaving.has(m.memberId)) continue;
    if (!m.classic) return false;
    remaining++;
  }
  return remaining > 0;
}

/**
 * Kafka's ClassicGroup.fromConsumerGroup: the classic members a consumer group of
 * classic members becomes, each with its target assignment in ConsumerProtocol format
 * in the version of its metadata for `protocolName` (the protocol the members' votes
 * choose; pick it with `protocolFor`).
 */
export function classicMembersOf(
  group: ConsumerGroup,
  topics: readonly TopicImage[],
): { protocolName: string; members: Member[] } {
  const members: Member[] = [...group.members.values()].map((m) => ({
    memberId: m.memberId,
    groupInstanceId: m.instanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    protocolType: CONSUMER_PROTOCOL_TYPE,
    protocols: m.classic!.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
    sessionTimeoutMs: m.classic!.sessionTimeoutMs,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    assignment: Buffer.alloc(0),
  }));
  const protocolName = voteProtocol(members);
  for (const m of members) {
    const metadata = m.protocols.find((p) => p.name === protocolName)?.metadata ?? Buffer.alloc(0);
    m.assignment = encodeAssignmentFor(group.targetOf(m.memberId), topics, metadata);
  }
  return { protocolName, members };
}

/** The classic group's protocol choice: every member votes for its first common protocol. */
function voteProtocol(members: readonly Member[]): string {
  const first = members[0]!;
  const candidates = first.protocols
    .map((p) => p.name)
    .filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
  const votes = new Map<string, number>(candidates.map((c) => [c, 0]));
  for (const m of members) {
    const choice = m.protocols.find((p) => votes.has(p.name));
    if (choice) votes.set(choice.name, votes.get(choice.name)! + 1);
  }
  let best = candidates[0] ?? first.protocols[0]?.name ?? '';
  for (const c of candidates) if (votes.get(c)! > (votes.get(best) ?? 0)) best = c;
  return best;
}
