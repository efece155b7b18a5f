import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
