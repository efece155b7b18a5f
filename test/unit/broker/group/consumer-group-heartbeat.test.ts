/**
 * ConsumerGroupHeartbeat as Kafka's GroupMetadataManager answers it (KIP-848): join,
 * steady state and leave; revocation before assignment; epochs fenced; session and
 * rebalance timeouts; static members; regex subscriptions; offset commits checked
 * against member epochs; one group id namespace with the classic protocol.
 */
import { describe, expect, it } from 'vitest';
import type { TopicImage } from '../../../../src/broker/group/consumer-group/assignment.ts';
import type { HeartbeatRequest } from '../../../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import { brokerConfigDefs } from '../../../../src/config/broker-config.ts';
import { parseConfig } from '../../../../src/config/config-def.ts';
import { heartbeatRequest as hb, joinFresh, setup } from './coordinator-fixture.ts';

const T = '11111111-1111-1111-1111-111111111111';
const U = '22222222-2222-2222-2222-222222222222';
let topics: TopicImage[] = [
  { name: 't', topicId: T, partitions: 4 },
  { name: 'other', topicId: U, partitions: 2 },
];

/** A steady-state heartbeat: nothing changed, owned partitions reported. */
function steady(memberId: string, memberEpoch: number, owned: number[] | null): HeartbeatRequest {
  return hb({
    memberId,
    memberEpoch,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    topicPartitions: owned === null ? null : [{ topicId: T, partitions: owned }],
  });
}

function owned(result: { assignment: Array<{ topicId: string; partitions: number[] }> | null }) {
  return result.assignment?.find((t) => t.topicId === T)?.partitions ?? [];
}

function start() {
  topics = [
    { name: 't', topicId: T, partitions: 4 },
    { name: 'other', topicId: U, partitions: 2 },
  ];
  const { coordinator, timers } = setup();
  const groups = coordinator.consumerGroups;
  const beat = (req: HeartbeatRequest) => groups.heartbeat(req, topics);
  return { coordinator, timers, groups, beat };
}

describe('joining and the steady state', () => {
  it('gives a first member an id, epoch 1, every partition and the heartbeat interval', () => {
    const { beat } = start();
    const r = beat(hb({}));
    expect(r.error).toBe('NONE');
    expect(r.memberId).toMatch(/.+/);
    expect(r.memberEpoch).toBe(1);
    expect(r.heartbeatIntervalMs).toBe(5000);
    expect(owned(r)).toEqual([0, 1, 2, 3]);
  });

  it('keeps the member id a KIP-1082 client chose', () => {
    const { beat } = start();
    expect(beat(hb({ memberId: 'chosen-by-client' })).memberId).toBe('chosen-by-client');
  });

  it('answers a steady heartbeat without an assignment', () => {
    const { beat } = start();
    const a = beat(hb({}));
    const r = beat(steady(a.memberId!, 1, [0, 1, 2, 3]));
    expect(r).toMatchObject({ error: 'NONE', memberEpoch: 1, assignment: null });
  });

  it('refuses a first heartbeat without a subscription, and an unknown assignor', () => {
    const { beat } = start();
    expect(beat(hb({ subscribedTopicNames: null })).error).toBe('INVALID_REQUEST');
    expect(beat(hb({ rebalanceTimeoutMs: -1 })).error).toBe('INVALID_REQUEST');
    const r = beat(hb({ serverAssignor: 'sticky' }));
    expect(r.error).toBe('UNSUPPORTED_ASSIGNOR');
    expect(r.errorMessage).toContain('uniform, range');
  });
});

describe('a second member joining', () => {
  it('gets its partitions only after the first member has revoked them', () => {
    const { beat } = start();
    const a = beat(hb({ memberId: 'a' }));
    const b = beat(hb({ memberId: 'b' }));
    // Everything is still a's: b is at the new epoch but with nothing yet.
    expect(b.memberEpoch).toBe(2);
    expect(owned(b)).toEqual([]);
    // a is asked to revoke half, staying at its epoch until it has.
    const revoke = beat(steady('a', a.memberEpoch, [0, 1, 2, 3]));
    expect(revoke.memberEpoch).toBe(1);
    const kept = owned(revoke);
    expect(kept).toHaveLength(2);
    // Still owning them: no change, b still waits.
    expect(beat(steady('a', 1, [0, 1, 2, 3])).assignment).toBeNull();
    expect(owned(beat(steady('b', 2, [])))).toEqual([]);
    // a acknowledges: it moves to epoch 2, b gets the released partitions.
    expect(beat(steady('a', 1, kept)).memberEpoch).toBe(2);
    const given = owned(beat(steady('b', 2, [])));
    expect([...kept, ...given].sort()).toEqual([0, 1, 2, 3]);
  });

  it('uses the range assignor when members ask for it', () => {
    const { beat, groups } = start();
    beat(hb({ memberId: 'a', serverAssignor: 'range' }));
    beat(hb({ memberId: 'b', serverAssignor: 'range' }));
    const described = groups.describe('g');
    expect(described.assignorName).toBe('range');
    expect([
      ...described.members.find((m) => m.memberId === 'a')!.targetAssignment.get(T)!,
    ]).toEqual([0, 1]);
  });

  it('reassigns when a subscribed topic gains partitions', () => {
    const { beat } = start();
    const a = beat(hb({ memberId: 'a' }));
    topics = topics.map((t) => (t.topicId === T ? { ...t, partitions: 6 } : t));
    const r = beat(steady('a', a.memberEpoch, [0, 1, 2, 3]));
    expect(r.memberEpoch).toBe(2);
    expect(owned(r)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('epochs', () => {
  it("fences an epoch above the member's", () => {
    const { beat } = start();
    beat(hb({ memberId: 'a' }));
    expect(beat(steady('a', 5, [])).error).toBe('FENCED_MEMBER_EPOCH');
  });

  it('accepts the previous epoch with partitions it still has (a lost answer), fences it otherwise', () => {
    const { beat } = start();
    beat(hb({ memberId: 'a', subscribedTopicNames: ['other'] }));
    // Subscribing to t moves a to epoch 2 (adding needs no revocation).
    const r = beat(
      hb({
        memberId: 'a',
        memberEpoch: 1,
        subscribedTopicNames: ['other', 't'],
        topicPartitions: [],
      }),
    );
    expect(r.memberEpoch).toBe(2);
    expect(beat(steady('a', 1, [])).error).toBe('NONE');
    expect(
      beat(
        hb({
          memberId: 'a',
          memberEpoch: 1,
          rebalanceTimeoutMs: -1,
          subscribedTopicNames: null,
          topicPartitions: null,
        }),
      ).error,
    ).toBe('FENCED_MEMBER_EPOCH');
  });

  it('answers UNKNOWN_MEMBER_ID to a member the group does not have, GROUP_ID_NOT_FOUND for a group it does not know', () => {
    const { beat } = start();
    beat(hb({ memberId: 'a' }));
    expect(beat(steady('nobody', 1, [])).error).toBe('UNKNOWN_MEMBER_ID');
    // As Kafka: the group survives restarts (__consumer_offsets), so an epoch for an
    // unknown group is not a member lost in a restart.
    expect(beat({ ...steady('a', 3, []), groupId: 'lost' }).error).toBe('GROUP_ID_NOT_FOUND');
  });
});

describe('leaving and timeouts', () => {
  it("frees a leaving member's partitions for the others", () => {
    const { beat } = start();
    beat(hb({ memberId: 'a' }));
    beat(hb({ memberId: 'b' }));
    const left = beat(
      hb({ memberId: 'a', memberEpoch: -1, subscribedTopicNames: null, topicPartitions: null }),
    );
    expect(left).toMatchObject({ error: 'NONE', memberEpoch: -1 });
    expect(owned(beat(steady('b', 2, [])))).toEqual([0, 1, 2, 3]);
  });

  it('removes a member whose heartbeats stop for the session timeout', () => {
    const { beat, timers, groups } = start();
    beat(hb({ memberId: 'a' }));
    timers.advance(44_000);
    beat(hb({ memberId: 'b' }));
    timers.advance(2_000);
    expect(groups.describe('g').members.map((m) => m.memberId)).toEqual(['b']);
    expect(beat(steady('a', 1, [])).error).toBe('UNKNOWN_MEMBER_ID');
  });

  it('removes a member that does not revoke within its rebalance timeout', () => {
    const { beat, timers, groups } = start();
    beat(hb({ memberId: 'a', rebalanceTimeoutMs: 10_000 }));
    beat(hb({ memberId: 'b' }));
    beat(steady('a', 1, [0, 1, 2, 3]));
    timers.advance(5_000);
    beat(steady('b', 2, []));
    timers.advance(6_000);
    expect(groups.describe('g').members.map((m) => m.memberId)).toEqual(['b']);
  });
});

describe('static members', () => {
  it('keep their place and partitions across a restart, without a new group epoch', () => {
    const { beat, groups } = start();
    beat(hb({ memberId: 'a', instanceId: 'i' }));
    beat(hb({ memberId: 'b' }));
    const left = beat(
      hb({
        memberId: 'a',
        instanceId: 'i',
        memberEpoch: -2,
        subscribedTopicNames: null,
        topicPartitions: null,
      }),
    );
    expect(left.memberEpoch).toBe(-2);
    const epoch = groups.describe('g').groupEpoch;
    const back = beat(hb({ memberId: 'a2', instanceId: 'i' }));
    expect(back.error).toBe('NONE');
    expect(groups.describe('g').groupEpoch).toBe(epoch);
    expect(
      groups
        .describe('g')
        .members.map((m) => m.memberId)
        .sort(),
    ).toEqual(['a2', 'b']);
    expect(owned(back).length).toBeGreaterThan(0);
  });

  it('answer UNRELEASED_INSTANCE_ID while the instance is still held, FENCED_INSTANCE_ID to the replaced', () => {
    const { beat } = start();
    beat(hb({ memberId: 'a', instanceId: 'i' }));
    expect(beat(hb({ memberId: 'x', instanceId: 'i' })).error).toBe('UNRELEASED_INSTANCE_ID');
    beat(
      hb({
        memberId: 'a',
        instanceId: 'i',
        memberEpoch: -2,
        subscribedTopicNames: null,
        topicPartitions: null,
      }),
    );
    beat(hb({ memberId: 'a2', instanceId: 'i' }));
    expect(beat({ ...steady('a', 1, []), instanceId: 'i' }).error).toBe('FENCED_INSTANCE_ID');
  });
});

describe('regex subscriptions', () => {
  it('subscribe to the topics the whole name matches', () => {
    const { beat, groups } = start();
    const r = beat(hb({ subscribedTopicNames: null, subscribedTopicRegex: 'ot.*' }));
    expect(r.assignment).toEqual([{ topicId: U, partitions: [0, 1] }]);
    expect(groups.describe('g').members[0]!.subscribedTopicRegex).toBe('ot.*');
  });

  it('refuse what RE2/J would not read the same way, by name', () => {
    const { beat } = start();
    for (const regex of ['t(?=x)', '(a)\\1', '(?i)T', '\\Qa.b\\E', '[[:alpha:]]+', '(']) {
      const r = beat(hb({ subscribedTopicNames: null, subscribedTopicRegex: regex }));
      expect(r.error).toBe('INVALID_REGULAR_EXPRESSION');
      expect(r.errorMessage).toContain(regex);
    }
  });
});

describe('offset commits of consumer group members', () => {
  const offsets = [{ topic: 't', partition: 0, offset: 5, leaderEpoch: -1, metadata: null }];
  const commit = (over: { memberId: string; generationId: number; apiVersion: number }) => ({
    groupId: 'g',
    groupInstanceId: null,
    offsets,
    ...over,
  });

  it('are checked against the member epoch (OffsetCommit v9)', async () => {
    const { beat, coordinator } = start();
    beat(hb({ memberId: 'a' }));
    expect(
      await coordinator.commitOffsets(commit({ memberId: 'a', generationId: 1, apiVersion: 9 })),
    ).toEqual(['NONE']);
    expect(coordinator.fetchOffsets('g', [{ topic: 't', partition: 0 }])[0]!.offset).toBe(5);
    beat(hb({ memberId: 'b' }));
    beat(steady('a', 1, [0, 1, 2, 3]));
    beat(steady('a', 1, [0, 1]));
    expect(
      await coordinator.commitOffsets(commit({ memberId: 'a', generationId: 1, apiVersion: 9 })),
    ).toEqual(['STALE_MEMBER_EPOCH']);
    expect(
      await coordinator.commitOffsets(commit({ memberId: 'a', generationId: 7, apiVersion: 9 })),
    ).toEqual(['FENCED_MEMBER_EPOCH']);
    expect(
      await coordinator.commitOffsets(commit({ memberId: 'z', generationId: 2, apiVersion: 9 })),
    ).toEqual(['UNKNOWN_MEMBER_ID']);
    expect(
      await coordinator.commitOffsets(commit({ memberId: 'a', generationId: 2, apiVersion: 8 })),
    ).toEqual(['UNSUPPORTED_VERSION']);
  });

  it('are checked against the member epoch in TxnOffsetCommit too', async () => {
    const { beat, coordinator } = start();
    beat(hb({ memberId: 'a' }));
    const txn = (generationId: number) =>
      coordinator.commitTxnOffsets({
        groupId: 'g',
        producerId: 1,
        producerEpoch: 0,
        generationId,
        memberId: 'a',
        groupInstanceId: null,
        offsets,
      });
    expect(await txn(1)).toEqual(['NONE']);
    expect(await txn(0)).toEqual(['STALE_MEMBER_EPOCH']);
  });

  it('without a member are refused while the group has members, allowed once it is empty', async () => {
    const { beat, coordinator } = start();
    beat(hb({ memberId: 'a' }));
    expect(
      await coordinator.commitOffsets(commit({ memberId: '', generationId: -1, apiVersion: 9 })),
    ).toEqual(['UNKNOWN_MEMBER_ID']);
    beat(hb({ memberId: 'a', memberEpoch: -1, subscribedTopicNames: null, topicPartitions: null }));
    expect(
      await coordinator.commitOffsets(commit({ memberId: '', generationId: -1, apiVersion: 9 })),
    ).toEqual(['NONE']);
  });
});

describe('expiry', () => {
  it('deletes an empty consumer group once its offsets have expired, not before', async () => {
    const { beat, coordinator, groups, timers } = start();
    const joined = beat(hb({ memberId: 'a' }));
    expect(
      await coordinator.commitOffsets({
        groupId: 'g',
        generationId: joined.memberEpoch,
        memberId: 'a',
        groupInstanceId: null,
        offsets: [{ topic: 't', partition: 0, offset: 5, leaderEpoch: -1, metadata: null }],
        apiVersion: 9,
      }),
    ).toEqual(['NONE']);
    beat({ ...steady('a', joined.memberEpoch, null), memberEpoch: -1 });
    await coordinator.expireOffsets();
    expect(groups.has('g')).toBe(true);
    // offsets.retention.minutes of the fixture: 7 days.
    timers.advance(7 * 24 * 3600 * 1000);
    expect(await coordinator.expireOffsets()).toBe(1);
    expect(groups.has('g')).toBe(false);
  });
});

describe('one namespace with classic groups', () => {
  it('refuses a classic JoinGroup for a consumer group with members', async () => {
    const { beat, coordinator } = start();
    beat(hb({ memberId: 'a' }));
    const r = await coordinator.join({
      groupId: 'g',
      memberId: '',
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/h',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from('m') }],
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      requireKnownMemberId: true,
    });
    expect(r.error).toBe('INCONSISTENT_GROUP_PROTOCOL');
  });

  it('answers GROUP_ID_NOT_FOUND to a heartbeat for a classic group with members', async () => {
    const { beat, coordinator } = start();
    await joinFresh(coordinator);
    const r = beat(hb({}));
    expect(r.error).toBe('GROUP_ID_NOT_FOUND');
    expect(r.errorMessage).toContain(
      'its online upgrade is disabled (group.consumer.migration.policy=disabled)',
    );
  });

  it('takes over an empty classic group and keeps its committed offsets', async () => {
    const { beat, coordinator } = start();
    await coordinator.commitOffsets({
      groupId: 'g',
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      offsets: [{ topic: 't', partition: 1, offset: 9, leaderEpoch: -1, metadata: null }],
    });
    expect(beat(hb({ memberId: 'a' })).error).toBe('NONE');
    expect(coordinator.fetchOffsets('g', [{ topic: 't', partition: 1 }])[0]!.offset).toBe(9);
  });

  it("accepts Kafka's four group.consumer.migration.policy values, case-insensitive, bidirectional by default as in Kafka 4.0", () => {
    const policy = (value: string | undefined) =>
      parseConfig(
        brokerConfigDefs,
        value === undefined ? {} : { 'group.consumer.migration.policy': value },
      );
    expect(policy(undefined).values['group.consumer.migration.policy']).toBe('bidirectional');
    for (const value of ['DISABLED', 'bidirectional', 'Upgrade', 'downgrade'])
      expect(policy(value).errors).toEqual([]);
    expect(policy('sideways').errors[0]!.message).toBe(
      'must be one of disabled, upgrade, downgrade, bidirectional',
    );
  });

  it('describes a classic group as not a consumer group', async () => {
    const { coordinator, groups } = start();
    await joinFresh(coordinator);
    expect(groups.describe('g')).toMatchObject({
      error: 'GROUP_ID_NOT_FOUND',
      errorMessage: 'Group g is not a consumer group.',
    });
    expect(groups.describe('none').errorMessage).toBe('Group none not found.');
  });
});
