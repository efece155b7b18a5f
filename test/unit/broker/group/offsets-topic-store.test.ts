import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HeartbeatRequest } from '../../../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import {
  decodeConsumerGroupKey,
  encodeConsumerGroupKey,
  encodeConsumerGroupValue,
} from '../../../../src/broker/group/consumer-group/consumer-group-records.ts';
import { GroupCoordinator } from '../../../../src/broker/group/group-coordinator.ts';
import {
  decodeKey,
  encodeGroupKey,
  encodeOffsetKey,
  offsetsPartitionFor,
} from '../../../../src/broker/group/offsets-topic-format.ts';
import {
  OFFSETS_TOPIC,
  OffsetsTopicStore,
} from '../../../../src/broker/group/offsets-topic-store.ts';
import { LogManager } from '../../../../src/broker/log/log-manager.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { ManualTimers } from '../../../../src/util/timers.ts';
import { memberHeartbeat } from './coordinator-fixture.ts';

const dirs: string[] = [];
const managers: LogManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openBroker(dataDir: string) {
  const timers = new ManualTimers();
  timers.clock.set(1_700_000_000_000);
  const logs = LogManager.open({ dataDir, brokerConfig: {}, clock: timers.clock });
  managers.push(logs);
  const store = OffsetsTopicStore.open(logs, {
    partitions: 5,
    segmentBytes: 1 << 20,
    clock: timers.clock,
    logger: getLogger('test'),
  });
  const coordinator = new GroupCoordinator({
    clock: timers.clock,
    timers,
    logger: getLogger('test'),
    store,
    minSessionTimeoutMs: 1000,
    maxSessionTimeoutMs: 300000,
    initialRebalanceDelayMs: 0,
    offsetsRetentionMs: 7 * 24 * 3600 * 1000,
    maxMetadataBytes: 4096,
  });
  store.loadInto(coordinator);
  return { logs, coordinator, timers };
}

describe('OffsetsTopicStore', () => {
  it('brings committed offsets and group generations back after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const first = openBroker(dataDir);
    first.logs.createTopic('orders', 3);
    const join1 = await first.coordinator.join({
      groupId: 'app',
      memberId: '',
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/h',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: 10000,
      requireKnownMemberId: false,
    });
    await first.coordinator.sync({
      groupId: 'app',
      memberId: join1.memberId,
      generationId: 1,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [],
    });
    await first.coordinator.commitOffsets({
      groupId: 'app',
      generationId: 1,
      memberId: join1.memberId,
      groupInstanceId: null,
      offsets: [
        { topic: 'orders', partition: 0, offset: 10, leaderEpoch: -1, metadata: 'a' },
        { topic: 'orders', partition: 2, offset: 20, leaderEpoch: -1, metadata: null },
      ],
    });
    await first.coordinator.commitOffsets({
      groupId: 'app',
      generationId: 1,
      memberId: join1.memberId,
      groupInstanceId: null,
      offsets: [{ topic: 'orders', partition: 0, offset: 11, leaderEpoch: -1, metadata: 'b' }],
    });
    await first.coordinator.deleteOffsets('app', []);
    first.coordinator.close();
    await first.logs.close();
    managers.length = 0;

    const second = openBroker(dataDir);
    const fetched = second.coordinator.fetchOffsets('app', [
      { topic: 'orders', partition: 0 },
      { topic: 'orders', partition: 1 },
      { topic: 'orders', partition: 2 },
    ]);
    expect(fetched.map((o) => [o.offset, o.metadata])).toEqual([
      [11, 'b'],
      [-1, ''],
      [20, ''],
    ]);
    // The generation carries on, so members of the old generation stay fenced.
    const rejoin = await second.coordinator.join({
      groupId: 'app',
      memberId: '',
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/h',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: 10000,
      requireKnownMemberId: false,
    });
    expect(rejoin.generationId).toBe(2);
    second.coordinator.close();
  });

  it('forgets deleted groups and their offsets across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const first = openBroker(dataDir);
    first.logs.createTopic('t', 1);
    await first.coordinator.commitOffsets({
      groupId: 'gone',
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      offsets: [{ topic: 't', partition: 0, offset: 5, leaderEpoch: -1, metadata: null }],
    });
    expect(await first.coordinator.deleteGroup('gone')).toBe('NONE');
    first.coordinator.close();
    await first.logs.close();
    managers.length = 0;
    const second = openBroker(dataDir);
    expect(second.coordinator.fetchOffsets('gone', null)).toEqual([]);
    expect(second.coordinator.listGroups()).toEqual([]);
    second.coordinator.close();
  });

  it('uses the internal topic as a compacted topic with Kafka key layouts', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const { logs, coordinator } = openBroker(dataDir);
    expect(logs.topic(OFFSETS_TOPIC)?.configs['cleanup.policy']).toBe('compact');
    expect(decodeKey(encodeOffsetKey('g', 't', 3))).toEqual({
      kind: 'offset',
      groupId: 'g',
      topic: 't',
      partition: 3,
    });
    expect(decodeKey(encodeGroupKey('g'))).toEqual({ kind: 'group', groupId: 'g' });
    // Same partition as Kafka: Utils.abs("my-group".hashCode()) % 50.
    expect(offsetsPartitionFor('my-group', 50)).toBe(12);
    coordinator.close();
  });
});

/** A KIP-848 member's heartbeat in group cg: joining, or steady with what it owns. */
function heartbeat(
  memberId: string,
  memberEpoch: number,
  owned: number[] | null,
): HeartbeatRequest {
  return memberHeartbeat(memberId, memberEpoch, owned, { groupId: 'cg' });
}

describe('consumer groups (KIP-848) in __consumer_offsets', () => {
  /** A broker with topic `t` (4 partitions) and a consumer group `cg` of members a and b, settled. */
  async function brokerWithGroup(dataDir: string) {
    const b = openBroker(dataDir);
    if (!b.logs.topic('t')) b.logs.createTopic('t', 4);
    const topicId = b.logs.topic('t')!.topicId;
    const groups = b.coordinator.consumerGroups;
    const owned = new Map<string, number[]>();
    const epochs = new Map<string, number>();
    /** A heartbeat with the member's epoch and partitions as it last heard them. */
    const beat = async (memberId: string, epoch = epochs.get(memberId) ?? 0) => {
      const req = heartbeat(memberId, epoch, epoch === 0 ? [] : (owned.get(memberId) ?? []));
      if (req.topicPartitions?.length) req.topicPartitions[0]!.topicId = topicId;
      const r = groups.heartbeat(req, b.logs.topics());
      await groups.stored('cg');
      if (r.error === 'NONE') epochs.set(memberId, r.memberEpoch);
      if (r.error === 'NONE' && r.assignment)
        owned.set(memberId, r.assignment.find((t) => t.topicId === topicId)?.partitions ?? []);
      return r;
    };
    /** Heartbeats of every member until the group is Stable. */
    const settle = async (...memberIds: string[]) => {
      for (let i = 0; i < 5 && groups.describe('cg').state !== 'Stable'; i++)
        for (const m of memberIds) await beat(m);
      expect(groups.describe('cg').state).toBe('Stable');
    };
    /** What a member knew before a restart, so it heartbeats on as it would. */
    const remember = (other: { owned: Map<string, number[]>; epochs: Map<string, number> }) => {
      for (const [m, ps] of other.owned) owned.set(m, [...ps]);
      for (const [m, e] of other.epochs) epochs.set(m, e);
    };
    return { ...b, groups, topicId, owned, epochs, beat, settle, remember };
  }

  const restart = async (first: { coordinator: GroupCoordinator; logs: LogManager }) => {
    first.coordinator.close();
    await first.logs.close();
    managers.length = 0;
  };

  it('keeps the group epoch, members and assignments across a restart: a member heartbeating with its epoch carries on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const first = await brokerWithGroup(dataDir);
    await first.beat('a');
    await first.beat('b');
    await first.settle('a', 'b');
    const before = first.groups.describe('cg');
    expect(before.groupEpoch).toBe(2);
    await restart(first);

    const second = await brokerWithGroup(dataDir);
    expect(second.groups.describe('cg')).toEqual(before);
    second.remember(first);
    const steady = await second.beat('a');
    expect([steady.error, steady.memberEpoch, steady.assignment]).toEqual(['NONE', 2, null]);
    expect(second.groups.describe('cg').groupEpoch).toBe(2);
    second.coordinator.close();
  });

  it('removes a member that does not heartbeat within its session timeout after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const first = await brokerWithGroup(dataDir);
    await first.beat('a');
    await first.beat('b');
    await first.settle('a', 'b');
    await restart(first);

    const second = await brokerWithGroup(dataDir);
    second.remember(first);
    second.timers.advance(40_000);
    expect((await second.beat('a')).error).toBe('NONE');
    // b's session (45 s by default) started when the group was loaded.
    second.timers.advance(6_000);
    await second.groups.stored('cg');
    // ... and that removal is itself stored, with the group epoch it moved to.
    await restart(second);
    const third = await brokerWithGroup(dataDir);
    third.remember(second);
    const described = third.groups.describe('cg');
    expect([described.groupEpoch, described.members.map((m) => m.memberId)]).toEqual([3, ['a']]);
    await third.settle('a');
    expect([third.epochs.get('a'), third.owned.get('a')]).toEqual([3, [0, 1, 2, 3]]);
    third.coordinator.close();
  });

  it('keeps a deleted group deleted across a restart, its records tombstoned', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'offsets-'));
    dirs.push(dataDir);
    const first = await brokerWithGroup(dataDir);
    await first.beat('a');
    first.groups.heartbeat(heartbeat('a', -1, null), first.logs.topics());
    expect(first.groups.deleteIfEmpty('cg')).toBe('NONE');
    await first.groups.stored('cg');
    await restart(first);

    const second = await brokerWithGroup(dataDir);
    expect(second.groups.has('cg')).toBe(false);
    expect(second.groups.describe('cg').error).toBe('GROUP_ID_NOT_FOUND');
    expect((await second.beat('a', 1)).error).toBe('GROUP_ID_NOT_FOUND');
    second.coordinator.close();
  });

  it("writes Kafka 4.0's record layouts: type-numbered keys, flexible version-0 values", () => {
    expect(encodeConsumerGroupKey('currentMemberAssignment', 'g', 'm').toString('hex')).toBe(
      '0008' + '000167' + '00016d',
    );
    expect(decodeConsumerGroupKey(Buffer.from('0003000167', 'hex'))).toEqual({
      kind: 'metadata',
      groupId: 'g',
      memberId: null,
    });
    expect(encodeConsumerGroupValue('metadata', { epoch: 5 }).toString('hex')).toBe(
      '0000' + '00000005' + '00',
    );
    const topicId = '0102030405060708090a0b0c0d0e0f10';
    expect(
      encodeConsumerGroupValue('currentMemberAssignment', {
        memberEpoch: 3,
        previousMemberEpoch: 2,
        state: 1,
        assignedPartitions: [
          { topicId: '01020304-0506-0708-090a-0b0c0d0e0f10', partitions: [0, 2] },
        ],
        partitionsPendingRevocation: [],
      }).toString('hex'),
    ).toBe(
      '0000' +
        '00000003' +
        '00000002' +
        '01' +
        // compact array of 1, uuid, compact int32 array of 2, empty tag section
        '02' +
        topicId +
        '03' +
        '00000000' +
        '00000002' +
        '00' +
        '01' +
        '00',
    );
    expect(
      encodeConsumerGroupValue('memberMetadata', {
        instanceId: null,
        rackId: null,
        clientId: 'c',
        clientHost: '/h',
        subscribedTopicNames: ['t'],
        subscribedTopicRegex: null,
        rebalanceTimeoutMs: 60_000,
        serverAssignor: 'uniform',
        classicMemberMetadata: null,
      }).toString('hex'),
    ).toBe(
      '0000' +
        '00' +
        '00' +
        '0263' +
        '032f68' +
        '020274' +
        '00' +
        '0000ea60' +
        '08' +
        Buffer.from('uniform').toString('hex') +
        // the classic member metadata (tag 0) is null, its default: not written
        '00',
    );
  });
});
