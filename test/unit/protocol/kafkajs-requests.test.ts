/**
 * Byte vectors from an independent implementation: requests encoded by kafkajs
 * 2.2.4's own encoders (node_modules/kafkajs/src/protocol/requests/<api>/v<N>/request.js)
 * must decode with our codec to the field values kafkajs was given, for every API
 * and version kafkajs implements among ours.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../../src/protocol/api-keys.ts';
import { decodeBody } from '../../../src/protocol/codec.ts';
import { Reader } from '../../../src/protocol/reader.ts';

const require = createRequire(import.meta.url);
const Long = require('kafkajs/src/utils/long');

interface Case {
  dir: string;
  apiKey: number;
  versions: number[];
  args: unknown;
  expected: (v: number) => Record<string, unknown>;
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const cases: Case[] = [
  {
    dir: 'apiVersions',
    apiKey: 18,
    versions: range(0, 2),
    args: undefined,
    expected: () => ({}),
  },
  {
    dir: 'metadata',
    apiKey: 3,
    versions: range(0, 6),
    args: { topics: ['orders', 'users'], allowAutoTopicCreation: false },
    expected: (v) => ({
      topics: [{ name: 'orders' }, { name: 'users' }],
      allowAutoTopicCreation: v < 4,
    }),
  },
  {
    dir: 'fetch',
    apiKey: 1,
    versions: range(0, 11),
    args: {
      replicaId: -1,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: 1048576,
      isolationLevel: 1,
      rackId: 'rack-a',
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic: 'orders',
          partitions: [
            {
              partition: 3,
              fetchOffset: '42',
              maxBytes: 65536,
              currentLeaderEpoch: 7,
              logStartOffset: '0',
            },
          ],
        },
      ],
    },
    expected: (v) => ({
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: v >= 3 ? 1048576 : 0x7fffffff,
      isolationLevel: v >= 4 ? 1 : 0,
      topics: [
        {
          topic: 'orders',
          partitions: [
            {
              partition: 3,
              fetchOffset: 42n,
              partitionMaxBytes: 65536,
              currentLeaderEpoch: v >= 9 ? 7 : -1,
              logStartOffset: v >= 5 ? 0n : -1n,
            },
          ],
        },
      ],
      rackId: v >= 11 ? 'rack-a' : '',
    }),
  },
  {
    dir: 'listOffsets',
    apiKey: 2,
    versions: range(0, 3),
    args: {
      replicaId: -1,
      isolationLevel: 1,
      topics: [{ topic: 'orders', partitions: [{ partition: 1, timestamp: -2 }] }],
    },
    expected: (v) => ({
      replicaId: -1,
      isolationLevel: v >= 2 ? 1 : 0,
      topics: [
        { name: 'orders', partitions: [{ partitionIndex: 1, timestamp: -2n, maxNumOffsets: 1 }] },
      ],
    }),
  },
  {
    dir: 'offsetCommit',
    apiKey: 8,
    versions: range(0, 5),
    args: {
      groupId: 'g1',
      groupGenerationId: 5,
      memberId: 'm-1',
      retentionTime: -1,
      topics: [
        {
          topic: 'orders',
          partitions: [{ partition: 0, offset: '100', metadata: 'meta', timestamp: 1234 }],
        },
      ],
    },
    expected: (v) => ({
      groupId: 'g1',
      generationId: v >= 1 ? 5 : -1,
      memberId: v >= 1 ? 'm-1' : '',
      retentionTimeMs: -1n,
      topics: [
        {
          name: 'orders',
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: 100n,
              committedMetadata: 'meta',
              commitTimestamp: v === 1 ? 1234n : -1n,
            },
          ],
        },
      ],
    }),
  },
  {
    dir: 'offsetFetch',
    apiKey: 9,
    versions: range(1, 4),
    args: {
      groupId: 'g1',
      topics: [{ topic: 'orders', partitions: [{ partition: 0 }, { partition: 2 }] }],
    },
    expected: () => ({ groupId: 'g1', topics: [{ name: 'orders', partitionIndexes: [0, 2] }] }),
  },
  {
    dir: 'findCoordinator',
    apiKey: 10,
    versions: range(0, 2),
    args: { groupId: 'g1', coordinatorKey: 'g1', coordinatorType: 1 },
    expected: (v) => ({ key: 'g1', keyType: v >= 1 ? 1 : 0 }),
  },
  {
    dir: 'joinGroup',
    apiKey: 11,
    versions: range(0, 5),
    args: {
      groupId: 'connect-cluster',
      sessionTimeout: 10000,
      rebalanceTimeout: 60000,
      memberId: '',
      groupInstanceId: 'worker-1',
      protocolType: 'connect',
      groupProtocols: [{ name: 'sessioned', metadata: Buffer.from([1, 2, 3]) }],
    },
    expected: (v) => ({
      groupId: 'connect-cluster',
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: v >= 1 ? 60000 : -1,
      memberId: '',
      groupInstanceId: v >= 5 ? 'worker-1' : null,
      protocolType: 'connect',
      protocols: [{ name: 'sessioned', metadata: Buffer.from([1, 2, 3]) }],
    }),
  },
  {
    dir: 'heartbeat',
    apiKey: 12,
    versions: range(0, 3),
    args: { groupId: 'g1', groupGenerationId: 3, memberId: 'm-1', groupInstanceId: 'i-1' },
    expected: (v) => ({
      groupId: 'g1',
      generationId: 3,
      memberId: 'm-1',
      groupInstanceId: v >= 3 ? 'i-1' : null,
    }),
  },
  {
    dir: 'leaveGroup',
    apiKey: 13,
    versions: range(0, 3),
    args: { groupId: 'g1', memberId: 'm-1', members: [{ memberId: 'm-1', groupInstanceId: null }] },
    expected: (v) =>
      v >= 3
        ? { groupId: 'g1', members: [{ memberId: 'm-1', groupInstanceId: null }] }
        : { groupId: 'g1', memberId: 'm-1', members: [] },
  },
  {
    dir: 'syncGroup',
    apiKey: 14,
    versions: range(0, 3),
    args: {
      groupId: 'g1',
      generationId: 4,
      memberId: 'm-1',
      groupInstanceId: 'i-1',
      groupAssignment: [{ memberId: 'm-1', memberAssignment: Buffer.from('assign') }],
    },
    expected: (v) => ({
      groupId: 'g1',
      generationId: 4,
      memberId: 'm-1',
      groupInstanceId: v >= 3 ? 'i-1' : null,
      assignments: [{ memberId: 'm-1', assignment: Buffer.from('assign') }],
    }),
  },
  {
    dir: 'describeGroups',
    apiKey: 15,
    versions: range(0, 2),
    args: { groupIds: ['a', 'b'] },
    expected: () => ({ groups: ['a', 'b'] }),
  },
  { dir: 'listGroups', apiKey: 16, versions: range(0, 2), args: undefined, expected: () => ({}) },
  {
    dir: 'saslHandshake',
    apiKey: 17,
    versions: range(0, 1),
    args: { mechanism: 'PLAIN' },
    expected: () => ({ mechanism: 'PLAIN' }),
  },
  {
    dir: 'createTopics',
    apiKey: 19,
    versions: range(0, 3),
    args: {
      timeout: 3000,
      validateOnly: true,
      topics: [
        {
          topic: 'orders',
          numPartitions: 6,
          replicationFactor: 1,
          replicaAssignment: [{ partition: 0, replicas: [1] }],
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    },
    expected: (v) => ({
      timeoutMs: 3000,
      validateOnly: v >= 1,
      topics: [
        {
          name: 'orders',
          numPartitions: 6,
          replicationFactor: 1,
          assignments: [{ partitionIndex: 0, brokerIds: [1] }],
          configs: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    }),
  },
  {
    dir: 'deleteTopics',
    apiKey: 20,
    versions: range(0, 1),
    args: { topics: ['a', 'b'], timeout: 1000 },
    expected: () => ({ topicNames: ['a', 'b'], timeoutMs: 1000 }),
  },
  {
    dir: 'deleteRecords',
    apiKey: 21,
    versions: range(0, 1),
    args: {
      topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '7' }] }],
      timeout: 1000,
    },
    expected: () => ({
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 7n }] }],
      timeoutMs: 1000,
    }),
  },
  {
    dir: 'initProducerId',
    apiKey: 22,
    versions: range(0, 1),
    args: { transactionalId: null, transactionTimeout: 30000 },
    expected: () => ({ transactionalId: null, transactionTimeoutMs: 30000 }),
  },
  {
    dir: 'addPartitionsToTxn',
    apiKey: 24,
    versions: range(0, 1),
    args: {
      transactionalId: 'tx',
      producerId: '9',
      producerEpoch: 2,
      topics: [{ topic: 'orders', partitions: [0, 1] }],
    },
    expected: () => ({
      transactionalId: 'tx',
      producerId: 9n,
      producerEpoch: 2,
      topics: [{ name: 'orders', partitions: [0, 1] }],
    }),
  },
  {
    dir: 'addOffsetsToTxn',
    apiKey: 25,
    versions: range(0, 1),
    args: { transactionalId: 'tx', producerId: '9', producerEpoch: 2, groupId: 'g1' },
    expected: () => ({ transactionalId: 'tx', producerId: 9n, producerEpoch: 2, groupId: 'g1' }),
  },
  {
    dir: 'endTxn',
    apiKey: 26,
    versions: range(0, 1),
    args: { transactionalId: 'tx', producerId: '9', producerEpoch: 2, transactionResult: true },
    expected: () => ({ transactionalId: 'tx', producerId: 9n, producerEpoch: 2, committed: true }),
  },
  {
    dir: 'txnOffsetCommit',
    apiKey: 28,
    versions: range(0, 1),
    args: {
      transactionalId: 'tx',
      groupId: 'g1',
      producerId: '9',
      producerEpoch: 2,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '5', metadata: null }] }],
    },
    expected: () => ({
      transactionalId: 'tx',
      groupId: 'g1',
      producerId: 9n,
      producerEpoch: 2,
      topics: [
        {
          name: 'orders',
          partitions: [{ partitionIndex: 0, committedOffset: 5n, committedMetadata: null }],
        },
      ],
    }),
  },
  {
    dir: 'describeConfigs',
    apiKey: 32,
    versions: range(0, 2),
    args: {
      resources: [{ type: 2, name: 'orders', configNames: ['retention.ms'] }],
      includeSynonyms: true,
    },
    expected: (v) => ({
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }],
      includeSynonyms: v >= 1,
    }),
  },
  {
    dir: 'alterConfigs',
    apiKey: 33,
    versions: range(0, 1),
    args: {
      resources: [
        { type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '1000' }] },
      ],
      validateOnly: true,
    },
    expected: () => ({
      resources: [
        {
          resourceType: 2,
          resourceName: 'orders',
          configs: [{ name: 'retention.ms', value: '1000' }],
        },
      ],
      validateOnly: true,
    }),
  },
  {
    dir: 'saslAuthenticate',
    apiKey: 36,
    versions: range(0, 1),
    // kafkajs's SASL mechanisms pass authBytes already length-prefixed (Encoder.writeBytes).
    args: { authBytes: Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('\0user\0pass')]) },
    expected: () => ({ authBytes: Buffer.from('\0user\0pass') }),
  },
  {
    dir: 'createPartitions',
    apiKey: 37,
    versions: range(0, 1),
    args: {
      topicPartitions: [{ topic: 'orders', count: 8, assignments: [[1], [1]] }],
      timeout: 2000,
      validateOnly: false,
    },
    expected: () => ({
      topics: [{ name: 'orders', count: 8, assignments: [{ brokerIds: [1] }, { brokerIds: [1] }] }],
      timeoutMs: 2000,
      validateOnly: false,
    }),
  },
  {
    dir: 'deleteGroups',
    apiKey: 42,
    versions: range(0, 1),
    args: ['g1', 'g2'],
    expected: () => ({ groupsNames: ['g1', 'g2'] }),
  },
];

async function kafkajsRequestBody(dir: string, version: number, args: unknown): Promise<Buffer> {
  const factory = require(`kafkajs/src/protocol/requests/${dir}/v${version}/request.js`);
  const request = factory(args);
  const encoder = await request.encode();
  return encoder.buffer as Buffer;
}

describe('requests encoded by kafkajs decode with our codec', () => {
  const flat = cases.flatMap((c) => c.versions.map((v) => [`${c.dir} v${v}`, c, v] as const));
  it.each(flat)('%s', async (_name, c, version) => {
    const bytes = await kafkajsRequestBody(c.dir, version, c.args);
    const schema = schemaFor(c.apiKey)!;
    const decoded = decodeBody(schema, version, 'request', new Reader(bytes));
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.value).toMatchObject(c.expected(version));
  });

  it.each(range(0, 7).map((v) => [`produce v${v}`, v] as const))(
    '%s keeps the records raw',
    async (_n, version) => {
      const args = {
        acks: -1,
        timeout: 30000,
        transactionalId: null,
        producerId: Long.fromInt(-1),
        producerEpoch: 0,
        topicData: [
          {
            topic: 'orders',
            partitions: [
              {
                partition: 2,
                firstSequence: 0,
                messages: [{ key: 'k', value: 'v', timestamp: 1000 }],
              },
            ],
          },
        ],
      };
      const bytes = await kafkajsRequestBody('produce', version, args);
      const decoded = decodeBody(schemaFor(0)!, version, 'request', new Reader(bytes));
      if (!decoded.ok) throw new Error(decoded.reason);
      const body = decoded.value;
      expect(body).toMatchObject({ acks: -1, timeoutMs: 30000, transactionalId: null });
      const partition = body.topicData[0].partitionData[0];
      expect(body.topicData[0].name).toBe('orders');
      expect(partition.index).toBe(2);
      // The records field is a view into the request bytes, not a copy.
      expect(partition.records.buffer).toBe(bytes.buffer);
      if (version >= 3) {
        // Record batch v2: magic byte at offset 16.
        expect(partition.records[16]).toBe(2);
        expect(partition.records.length).toBe(partition.records.readInt32BE(8) + 12);
      }
    },
  );
});
