/**
 * The online migration between the classic protocol and the consumer protocol
 * (KIP-848) under group.consumer.migration.policy, as Kafka 4.0 does it: a
 * ConsumerGroupHeartbeat upgrades a classic `consumer` group, whose members are then
 * served through JoinGroup/SyncGroup/Heartbeat with assignments computed by the
 * coordinator; the last member speaking the consumer protocol leaving downgrades it.
 */
import { describe, expect, it } from 'vitest';
import type { TopicImage } from '../../../../src/broker/group/consumer-group/assignment.ts';
import type { HeartbeatRequest } from '../../../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import type { MigrationPolicy } from '../../../../src/broker/group/consumer-group/migration.ts';
import type { GroupCoordinator } from '../../../../src/broker/group/group-coordinator.ts';
import {
  decodeAssignment,
  encodeAssignment,
  encodeSubscription,
} from '../../../../src/protocol/consumer-protocol.ts';
import { heartbeatRequest, joinRequest, setup } from './coordinator-fixture.ts';

const T = '11111111-1111-1111-1111-111111111111';
const topics: TopicImage[] = [{ name: 't', topicId: T, partitions: 4 }];
const metadata = encodeSubscription(['t']);

function hb(over: Partial<HeartbeatRequest> = {}): HeartbeatRequest {
  return heartbeatRequest({ memberId: 'new', ...over });
}

/** A classic member's JoinGroup as kafkajs sends it (eager, v0 subscription). */
function classicJoin(memberId: string, protocolType = 'consumer') {
  return joinRequest({
    memberId,
    protocolType,
    protocols: [{ name: 'RoundRobinAssigner', metadata }],
  });
}

/** Two classic members a and b in a Stable generation 1, a the leader with 0,1 and b 2,3. */
async function classicGroup(policy: MigrationPolicy, protocolType = 'consumer') {
  const { coordinator, timers } = setup(0, policy);
  const a = (await coordinator.join(classicJoin('', protocolType))).memberId;
  const b = (await coordinator.join(classicJoin('', protocolType))).memberId;
  const [ra, rb] = await Promise.all([
    coordinator.join(classicJoin(a, protocolType)),
    coordinator.join(classicJoin(b, protocolType)),
  ]);
  expect([ra.error, rb.error, ra.generationId]).toEqual(['NONE', 'NONE', 1]);
  const leader = ra.leaderId === a ? a : b;
  const follower = leader === a ? b : a;
  const assignments = [
    { memberId: leader, assignment: encodeAssignment([{ topic: 't', partitions: [0, 1] }]) },
    { memberId: follower, assignment: encodeAssignment([{ topic: 't', partitions: [2, 3] }]) },
  ];
  const sync = (memberId: string) =>
    coordinator.sync({
      groupId: 'g',
      memberId,
      generationId: 1,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: memberId === leader ? assignments : [],
    });
  await Promise.all([sync(follower), sync(leader)]);
  return { coordinator, timers, leader, follower };
}

async function rejoinAndSync(c: GroupCoordinator, memberId: string) {
  const joined = await c.join(classicJoin(memberId), topics);
  expect(joined).toMatchObject({ error: 'NONE', leaderId: '', members: [] });
  const synced = await c.sync(
    {
      groupId: 'g',
      memberId,
      generationId: joined.generationId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'RoundRobinAssigner',
      // A leader's assignment is ignored in a consumer group.
      assignments: [
        { memberId, assignment: encodeAssignment([{ topic: 't', partitions: [0, 1, 2, 3] }]) },
      ],
    },
    topics,
  );
  expect(synced.error).toBe('NONE');
  return {
    generation: joined.generationId,
    partitions: decodeAssignment(synced.assignment).flatMap((t) => t.partitions),
  };
}

/** Heartbeats of the KIP-848 member until its assignment stops changing. */
function settle(
  c: GroupCoordinator,
  epoch: number,
  owned: number[],
): { epoch: number; owned: number[] } {
  for (let i = 0; i < 10; i++) {
    const r = c.consumerGroups.heartbeat(
      hb({
        memberEpoch: epoch,
        rebalanceTimeoutMs: -1,
        subscribedTopicNames: null,
        topicPartitions: [{ topicId: T, partitions: owned }],
      }),
      topics,
    );
    expect(r.error).toBe('NONE');
    const next = r.assignment?.[0]?.partitions ?? (r.assignment ? [] : owned);
    if (r.memberEpoch === epoch && next.join() === owned.join()) break;
    epoch = r.memberEpoch;
    owned = [...next].sort();
  }
  return { epoch, owned };
}

describe('upgrading a classic group with a ConsumerGroupHeartbeat', () => {
  it('makes its members classic members of a consumer group, the new member getting partitions they release when they rejoin', async () => {
    const { coordinator, leader, follower } = await classicGroup('upgrade');
    const first = coordinator.consumerGroups.heartbeat(hb(), topics);
    expect(first).toMatchObject({ error: 'NONE', memberEpoch: 2, assignment: [] });
    const described = coordinator.consumerGroups.describe('g');
    expect(described.members.map((m) => m.memberId).sort()).toEqual(
      [leader, follower, 'new'].sort(),
    );
    // The classic members are told to rejoin, and are given what the coordinator computed.
    expect(coordinator.heartbeat('g', leader, 1, null)).toBe('REBALANCE_IN_PROGRESS');
    expect(coordinator.heartbeat('g', follower, 1, null)).toBe('REBALANCE_IN_PROGRESS');
    const l = await rejoinAndSync(coordinator, leader);
    const f = await rejoinAndSync(coordinator, follower);
    expect([l.generation, f.generation]).toEqual([2, 2]);
    const n = settle(coordinator, 2, []);
    const all = [...l.partitions, ...f.partitions, ...n.owned].sort();
    expect(all).toEqual([0, 1, 2, 3]);
    expect(n.owned.length).toBeGreaterThan(0);
    expect(coordinator.heartbeat('g', leader, 2, null)).toBe('NONE');
  });

  it('keeps the offsets the group committed, and checks a classic member commit against its generation', async () => {
    const { coordinator, leader } = await classicGroup('bidirectional');
    const commit = (generationId: number, offset: number) =>
      coordinator.commitOffsets({
        groupId: 'g',
        generationId,
        memberId: leader,
        groupInstanceId: null,
        offsets: [{ topic: 't', partition: 0, offset, leaderEpoch: -1, metadata: null }],
      });
    expect(await commit(1, 5)).toEqual(['NONE']);
    coordinator.consumerGroups.heartbeat(hb(), topics);
    expect(coordinator.fetchOffsets('g', [{ topic: 't', partition: 0 }])[0]!.offset).toBe(5);
    expect(await commit(1, 6)).toEqual(['NONE']);
    const rejoined = await rejoinAndSync(coordinator, leader);
    expect(await commit(rejoined.generation - 1, 7)).toEqual(['ILLEGAL_GENERATION']);
    expect(await commit(rejoined.generation, 8)).toEqual(['NONE']);
    expect(coordinator.fetchOffsets('g', [{ topic: 't', partition: 0 }])[0]!.offset).toBe(8);
  });

  it('answers a classic member waiting in JoinGroup REBALANCE_IN_PROGRESS when the group is upgraded mid-rebalance', async () => {
    const { coordinator, leader } = await classicGroup('upgrade');
    const waiting = coordinator.join(classicJoin(leader), topics);
    coordinator.consumerGroups.heartbeat(hb(), topics);
    expect((await waiting).error).toBe('REBALANCE_IN_PROGRESS');
    expect(coordinator.consumerGroups.has('g')).toBe(true);
  });

  it('leaves a group of another protocol type classic: GROUP_ID_NOT_FOUND', async () => {
    const { coordinator } = await classicGroup('bidirectional', 'connect');
    const r = coordinator.consumerGroups.heartbeat(hb(), topics);
    expect([r.error, r.errorMessage]).toEqual([
      'GROUP_ID_NOT_FOUND',
      'Group g is not a consumer group.',
    ]);
    expect(coordinator.consumerGroups.has('g')).toBe(false);
  });

  it('leaves a group whose member metadata is not a ConsumerProtocol subscription classic', async () => {
    const { coordinator } = setup(0, 'upgrade');
    const id = (await coordinator.join(joinRequest())).memberId;
    // joinRequest's metadata is one byte: not a subscription.
    expect((await coordinator.join(joinRequest({ memberId: id }))).error).toBe('NONE');
    const r = coordinator.consumerGroups.heartbeat(hb(), topics);
    expect([r.error, r.errorMessage]).toEqual([
      'GROUP_ID_NOT_FOUND',
      'Cannot upgrade the classic group g to consumer group because the embedded consumer protocol is malformed.',
    ]);
    expect(coordinator.describeGroup('g').members.map((m) => m.memberId)).toEqual([id]);
  });

  it('takes a new classic member into the consumer group through the member id round trip', async () => {
    const { coordinator } = await classicGroup('upgrade');
    coordinator.consumerGroups.heartbeat(hb(), topics);
    const first = await coordinator.join(classicJoin(''), topics);
    expect(first.error).toBe('MEMBER_ID_REQUIRED');
    const joined = await rejoinAndSync(coordinator, first.memberId);
    expect(joined.generation).toBe(3);
    expect(coordinator.consumerGroups.describe('g').members).toHaveLength(4);
  });

  it('is refused under the downgrade-only policy', async () => {
    const { coordinator } = await classicGroup('downgrade');
    expect(coordinator.consumerGroups.heartbeat(hb(), topics).error).toBe('GROUP_ID_NOT_FOUND');
  });

  it('removes a classic member told to rejoin that does not within its rebalance timeout', async () => {
    const { coordinator, timers, leader, follower } = await classicGroup('upgrade');
    coordinator.consumerGroups.heartbeat(hb(), topics);
    expect(coordinator.heartbeat('g', follower, 1, null)).toBe('REBALANCE_IN_PROGRESS');
    await rejoinAndSync(coordinator, leader);
    // Both heartbeat within their 10 s sessions; the follower never rejoins.
    for (let i = 0; i < 3; i++) {
      timers.advance(9_500);
      expect(coordinator.heartbeat('g', leader, 2, null)).toBe('NONE');
      expect(coordinator.heartbeat('g', follower, 1, null)).toBe('REBALANCE_IN_PROGRESS');
    }
    expect(coordinator.consumerGroups.describe('g').members.map((m) => m.memberId)).toContain(
      follower,
    );
    timers.advance(2_000);
    expect(coordinator.consumerGroups.describe('g').members.map((m) => m.memberId)).not.toContain(
      follower,
    );
  });
});

describe('downgrading a consumer group of classic members', () => {
  it('makes it a classic group again when the last consumer-protocol member leaves (bidirectional)', async () => {
    const { coordinator, leader, follower } = await classicGroup('bidirectional');
    coordinator.consumerGroups.heartbeat(hb(), topics);
    const l = await rejoinAndSync(coordinator, leader);
    await rejoinAndSync(coordinator, follower);
    const left = coordinator.consumerGroups.heartbeat(hb({ memberEpoch: -1 }), topics);
    expect(left.error).toBe('NONE');
    expect(coordinator.consumerGroups.has('g')).toBe(false);
    expect(coordinator.describeGroup('g')).toMatchObject({ state: 'PreparingRebalance' });
    // The classic members rejoin a classic rebalance; the leader assigns again.
    expect(coordinator.heartbeat('g', leader, l.generation, null)).toBe('REBALANCE_IN_PROGRESS');
    const [ra, rb] = await Promise.all([
      coordinator.join(classicJoin(leader)),
      coordinator.join(classicJoin(follower)),
    ]);
    expect([ra.error, rb.error]).toEqual(['NONE', 'NONE']);
    expect(ra.generationId).toBe(l.generation + 1);
    expect([ra.members.length + rb.members.length]).toEqual([2]);
  });

  it('keeps it a consumer group under the upgrade-only policy', async () => {
    const { coordinator, leader } = await classicGroup('upgrade');
    coordinator.consumerGroups.heartbeat(hb(), topics);
    coordinator.consumerGroups.heartbeat(hb({ memberEpoch: -1 }), topics);
    expect(coordinator.consumerGroups.has('g')).toBe(true);
    const again = await rejoinAndSync(coordinator, leader);
    expect(again.partitions.length).toBeGreaterThan(0);
  });
});
