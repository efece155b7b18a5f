/**
 * The online migration between the classic protocol and the consumer protocol
 * (KIP-848) over the wire: a kafkajs consumer (classic) in a group, a KIP-848 member
 * (helpers/kip848-member.ts) joining it under group.consumer.migration.policy=
 * bidirectional; both get disjoint partitions covering the topic, the group's
 * committed offsets stay, kafkajs keeps consuming, and when the KIP-848 member leaves
 * the group is classic again with kafkajs owning everything. A converted group with a
 * classic member survives a broker restart.
 */
import type { Consumer, Kafka } from 'kafkajs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { BrokerConnection } from '../../../src/protocol/client/broker-connection.ts';
import type { Message } from '../../../src/protocol/codec.ts';
import {
  decodeAssignment,
  encodeAssignment,
  encodeSubscription,
} from '../../../src/protocol/consumer-protocol.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { useBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { Kip848Member } from './helpers/kip848-member.ts';

const POLICY = { 'group.consumer.migration.policy': 'bidirectional' };

/** Polls until `check` holds (no timing asserted: the test's timeout bounds it). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

async function admin(client: Kafka) {
  const a = client.admin();
  await a.connect();
  onTestFinished(() => a.disconnect());
  return a;
}

describe('group.consumer.migration.policy=bidirectional over the wire', () => {
  it('upgrades a kafkajs group when a KIP-848 member joins, and downgrades it when that member leaves', async () => {
    const broker = await useBroker({ config: POLICY });
    const client = kafka(broker.bootstrap);
    const topicAdmin = await admin(client);
    const topic = 'migrated';
    const groupId = 'migrating-group';
    await topicAdmin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
    const producer = client.producer();
    await producer.connect();
    onTestFinished(() => producer.disconnect());
    const produce = (tag: string) =>
      producer.send({
        topic,
        messages: [0, 1, 2, 3].map((partition) => ({ partition, value: `${tag}-${partition}` })),
      });
    await produce('before');

    let kafkajsOwns: number[] = [];
    const seen: string[] = [];
    const consumer: Consumer = client.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 100,
      rebalanceTimeout: 20_000,
      // kafkajs heartbeats between fetches: a short long-poll lets it see a rebalance soon.
      maxWaitTimeInMs: 100,
    });
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      kafkajsOwns = [...(e.payload.memberAssignment[topic] ?? [])].sort();
    });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommitInterval: 50,
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString());
      },
    });
    await until(() => seen.filter((v) => v.startsWith('before')).length === 4, 'kafkajs read');
    await until(async () => {
      const o = await topicAdmin.fetchOffsets({ groupId, topics: [topic] });
      return o[0]!.partitions.every((p) => p.offset === '1');
    }, 'kafkajs committed');

    const member = await Kip848Member.connect(broker.bootstrap, { groupId, topics: [topic] });
    onTestFinished(() => member.close());
    const joined = await member.heartbeat();
    expect(joined.errorCode).toBe(ErrorCode.NONE);
    // kafkajs is told to rejoin; the KIP-848 member picks up what it releases.
    await until(async () => {
      await member.heartbeat();
      const mine = member.ownedPartitions();
      const union = [...mine, ...kafkajsOwns].sort();
      return mine.length > 0 && union.join() === '0,1,2,3';
    }, 'disjoint assignments covering the topic');
    const described = await member.connection.request(ApiKey.ConsumerGroupDescribe, {
      groupIds: [groupId],
      includeAuthorizedOperations: false,
    });
    expect(described.groups[0].errorCode).toBe(ErrorCode.NONE);
    expect(described.groups[0].members).toHaveLength(2);
    const offsets = await topicAdmin.fetchOffsets({ groupId, topics: [topic] });
    expect(offsets[0]!.partitions.map((p) => p.offset)).toEqual(['1', '1', '1', '1']);

    // kafkajs keeps consuming its partitions inside the consumer group.
    const kept = [...kafkajsOwns];
    await produce('during');
    await until(
      () => kept.every((p) => seen.includes(`during-${p}`)),
      'kafkajs consumed in the consumer group',
    );

    expect((await member.leave()).errorCode).toBe(ErrorCode.NONE);
    await until(() => kafkajsOwns.join() === '0,1,2,3', 'kafkajs owns every partition again');
    const classic = await member.connection.request(ApiKey.DescribeGroups, { groups: [groupId] });
    expect(classic.groups[0]).toMatchObject({ errorCode: 0, protocolType: 'consumer' });
    const gone = await member.connection.request(ApiKey.ConsumerGroupDescribe, {
      groupIds: [groupId],
      includeAuthorizedOperations: false,
    });
    expect(gone.groups[0].errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('keeps an upgraded group, its classic member and its offsets across a broker restart', async () => {
    const dataDir = useTmpDir('migration-restart-');
    const first = await useBroker({ dataDir, config: POLICY });
    const client = kafka(first.bootstrap);
    await (await admin(client)).createTopics({ topics: [{ topic: 'kept', numPartitions: 2 }] });
    const c = await BrokerConnection.connect('127.0.0.1', first.port, { clientId: 'classic' });
    onTestFinished(() => c.close());
    const join = (conn: BrokerConnection, memberId: string) =>
      conn.request(ApiKey.JoinGroup, {
        groupId: 'g',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: encodeSubscription(['kept']) }],
        reason: null,
      });
    const id = (await join(c, '')).memberId as string;
    const joined = await join(c, id);
    expect([joined.errorCode, joined.generationId]).toEqual([0, 1]);
    const sync = (conn: BrokerConnection, generationId: number) =>
      conn.request(ApiKey.SyncGroup, {
        groupId: 'g',
        generationId,
        memberId: id,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [
          { memberId: id, assignment: encodeAssignment([{ topic: 'kept', partitions: [0, 1] }]) },
        ],
      });
    expect((await sync(c, 1)).errorCode).toBe(0);
    const committed = await c.request(ApiKey.OffsetCommit, {
      groupId: 'g',
      generationId: 1,
      memberId: id,
      groupInstanceId: null,
      topics: [
        {
          name: 'kept',
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: 3n,
              committedLeaderEpoch: -1,
              committedMetadata: null,
            },
          ],
        },
      ],
    });
    expect(committed.topics[0].partitions[0].errorCode).toBe(0);
    const member = await Kip848Member.connect(first.bootstrap, { groupId: 'g', topics: ['kept'] });
    onTestFinished(() => member.close());
    expect((await member.heartbeat()).errorCode).toBe(0);
    await first.stop();

    const second = await useBroker({ dataDir, config: POLICY });
    const c2 = await BrokerConnection.connect('127.0.0.1', second.port, { clientId: 'classic' });
    onTestFinished(() => c2.close());
    const described = await c2.request(ApiKey.ConsumerGroupDescribe, {
      groupIds: ['g'],
      includeAuthorizedOperations: false,
    });
    expect(described.groups[0].errorCode).toBe(0);
    expect((described.groups[0].members as Message[]).map((m) => m.memberId)).toContain(id);
    // Still a classic member of the consumer group: told to rejoin, then served by it.
    const beat = await c2.request(ApiKey.Heartbeat, {
      groupId: 'g',
      generationId: 1,
      memberId: id,
      groupInstanceId: null,
    });
    expect(beat.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoined = await join(c2, id);
    expect([rejoined.errorCode, rejoined.leader]).toEqual([0, '']);
    const synced = await sync(c2, rejoined.generationId);
    expect(synced.errorCode).toBe(0);
    expect(decodeAssignment(Buffer.from(synced.assignment))[0]!.partitions.length).toBeGreaterThan(
      0,
    );
    const fetched = await c2.request(ApiKey.OffsetFetch, {
      groupId: 'g',
      topics: [{ name: 'kept', partitionIndexes: [0] }],
      groups: [
        {
          groupId: 'g',
          memberId: null,
          memberEpoch: -1,
          topics: [{ name: 'kept', partitionIndexes: [0] }],
        },
      ],
      requireStable: false,
    });
    const partitions = (fetched.groups?.[0]?.topics ?? fetched.topics)[0].partitions;
    expect(partitions[0].committedOffset).toBe(3n);
  });
});
