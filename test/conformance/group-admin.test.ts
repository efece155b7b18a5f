import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../src/protocol/api-keys.ts';
import { BrokerConnection } from '../../src/protocol/client/broker-connection.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kafka } from './helpers/kafkajs.ts';

let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker();
  const admin = kafka(b.bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'admin-t', numPartitions: 3 }] });
  await admin.disconnect();
});
afterAll(() => b?.stop());

describe('group administration with kafkajs admin', () => {
  it('sets, fetches and resets offsets of an empty group, lists, describes and deletes it', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    try {
      await admin.setOffsets({
        groupId: 'ops',
        topic: 'admin-t',
        partitions: [
          { partition: 0, offset: '5' },
          { partition: 2, offset: '9' },
        ],
      });
      const fetched = await admin.fetchOffsets({ groupId: 'ops', topics: ['admin-t'] });
      expect(
        fetched[0]!.partitions.sort((x, y) => x.partition - y.partition).map((p) => p.offset),
      ).toEqual(['5', '-1', '9']);

      // kafkajs's setOffsets joins the group with a consumer to commit, so it is a
      // consumer group that is now Empty.
      expect((await admin.listGroups()).groups).toContainEqual({
        groupId: 'ops',
        protocolType: 'consumer',
      });
      const described = await admin.describeGroups(['ops']);
      expect(described.groups[0]).toMatchObject({ groupId: 'ops', state: 'Empty', members: [] });

      await admin.deleteGroups(['ops']);
      expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain('ops');
      const after = await admin.fetchOffsets({ groupId: 'ops', topics: ['admin-t'] });
      expect(after[0]!.partitions.map((p) => p.offset)).toEqual(['-1', '-1', '-1']);
    } finally {
      await admin.disconnect();
    }
  });

  it('refuses to delete a group that has members', async () => {
    const consumer = kafka(b.bootstrap).consumer({ groupId: 'busy', maxWaitTimeInMs: 100 });
    const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()));
    await consumer.connect();
    await consumer.subscribe({ topic: 'admin-t' });
    await consumer.run({ eachMessage: async () => {} });
    await joined;
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    try {
      await expect(admin.deleteGroups(['busy'])).rejects.toMatchObject({
        groups: [
          expect.objectContaining({ groupId: 'busy', errorCode: ErrorCode.NON_EMPTY_GROUP }),
        ],
      });
    } finally {
      await admin.disconnect();
      await consumer.disconnect();
    }
  });

  it('lists and describes a consumer group its members left as Empty, still of protocol type consumer', async () => {
    const consumer = kafka(b.bootstrap).consumer({ groupId: 'emptied', maxWaitTimeInMs: 100 });
    const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()));
    await consumer.connect();
    await consumer.subscribe({ topic: 'admin-t' });
    await consumer.run({ eachMessage: async () => {} });
    await joined;
    await consumer.disconnect();
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    try {
      // Kafka keeps an emptied group's protocol type; '' would make it a simple group.
      expect((await admin.listGroups()).groups).toContainEqual({
        groupId: 'emptied',
        protocolType: 'consumer',
      });
      const described = await admin.describeGroups(['emptied']);
      expect(described.groups[0]).toMatchObject({
        groupId: 'emptied',
        state: 'Empty',
        protocolType: 'consumer',
        protocol: '',
        members: [],
      });
    } finally {
      await admin.disconnect();
    }
  });

  it('deletes offsets of partitions a group no longer consumes (OffsetDelete)', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.setOffsets({
      groupId: 'trim',
      topic: 'admin-t',
      partitions: [{ partition: 1, offset: '3' }],
    });
    const conn = await BrokerConnection.connect('127.0.0.1', b.port, { clientId: 'test' });
    try {
      const answer = await conn.request(ApiKey.OffsetDelete, {
        groupId: 'trim',
        topics: [{ name: 'admin-t', partitions: [{ partitionIndex: 1 }] }],
      });
      expect(answer.errorCode).toBe(0);
      expect(answer.topics[0].partitions[0].errorCode).toBe(0);
      const fetched = await admin.fetchOffsets({ groupId: 'trim', topics: ['admin-t'] });
      expect(fetched[0]!.partitions.find((p) => p.partition === 1)!.offset).toBe('-1');
      const unknown = await conn.request(ApiKey.OffsetDelete, { groupId: 'nobody', topics: [] });
      expect(unknown.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    } finally {
      conn.close();
      await admin.disconnect();
    }
  });
});
