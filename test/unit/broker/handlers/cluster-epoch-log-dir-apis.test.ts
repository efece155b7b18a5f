/**
 * DescribeCluster, OffsetForLeaderEpoch, DescribeLogDirs and DescribeTopicPartitions
 * through the wire, at every version the broker advertises, as Kafka's broker answers
 * them on a single node.
 */
import { readdirSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { type RawClient, useRawBroker } from '../server/raw-client.ts';

const raw = useRawBroker();
let c: RawClient;

const NOT_ASKED = -2147483648;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

const createTopic = (name: string, numPartitions: number) =>
  c.request(ApiKey.CreateTopics, 4, {
    topics: [{ name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }],
    timeoutMs: 1000,
    validateOnly: false,
  });

const produce = (topic: string, partition: number, values: string[]) =>
  c.request(ApiKey.Produce, 7, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 1000,
    topicData: [
      {
        name: topic,
        partitionData: [
          {
            index: partition,
            records: encodeBatch({
              records: values.map((v, i) => ({
                timestamp: 1000 + i,
                key: null,
                value: Buffer.from(v),
              })),
            }),
          },
        ],
      },
    ],
  });

beforeAll(async () => {
  c = await raw.client();
  await createTopic('epochs', 2);
  await produce('epochs', 0, ['a', 'b', 'c']);
  await createTopic('dirs', 3);
  await produce('dirs', 0, ['x']);
  await produce('dirs', 2, ['y', 'z']);
  await createTopic('paged-a', 5);
  await createTopic('paged-b', 2);
});

describe('ApiVersions', () => {
  it('advertises every version of the four APIs', async () => {
    const res = await c.request(ApiKey.ApiVersions, 3, {
      clientSoftwareName: 'raw-client',
      clientSoftwareVersion: '1.0.0',
    });
    const range = (apiKey: number) => (res.apiKeys as Message[]).find((k) => k.apiKey === apiKey);
    expect(range(ApiKey.DescribeCluster)).toEqual({
      apiKey: ApiKey.DescribeCluster,
      minVersion: 0,
      maxVersion: 1,
    });
    expect(range(ApiKey.OffsetForLeaderEpoch)).toMatchObject({ minVersion: 0, maxVersion: 4 });
    expect(range(ApiKey.DescribeLogDirs)).toMatchObject({ minVersion: 0, maxVersion: 4 });
    expect(range(ApiKey.DescribeTopicPartitions)).toMatchObject({ minVersion: 0, maxVersion: 0 });
  });
});

describe('DescribeCluster', () => {
  it.each([0, 1])(
    'v%i describes this node as the only broker and the controller, with the cluster id Metadata gives',
    async (v) => {
      const metadata = await c.request(ApiKey.Metadata, 8, {
        topics: [],
        allowAutoTopicCreation: false,
      });
      const res = await c.request(ApiKey.DescribeCluster, v, {
        includeClusterAuthorizedOperations: false,
        endpointType: 1,
      });
      expect(res).toEqual({
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        endpointType: 1,
        clusterId: metadata.clusterId,
        controllerId: 1,
        brokers: [{ brokerId: 1, host: '127.0.0.1', port: raw.broker().port, rack: null }],
        clusterAuthorizedOperations: NOT_ASKED,
      });
    },
  );

  it.each([0, 1])(
    'v%i answers the cluster authorized operations when asked, as Metadata v8 does',
    async (v) => {
      const metadata = await c.request(ApiKey.Metadata, 8, {
        topics: [],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: true,
      });
      const res = await c.request(ApiKey.DescribeCluster, v, {
        includeClusterAuthorizedOperations: true,
      });
      expect(res.clusterAuthorizedOperations).toBe(metadata.clusterAuthorizedOperations);
      expect(res.clusterAuthorizedOperations).not.toBe(NOT_ASKED);
    },
  );

  it('v1 refuses the controllers endpoint type as a broker listener does, and an unknown type by number', async () => {
    const controllers = await c.request(ApiKey.DescribeCluster, 1, {
      includeClusterAuthorizedOperations: false,
      endpointType: 2,
    });
    expect(controllers).toMatchObject({
      errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE,
      errorMessage:
        'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER',
      brokers: [],
      controllerId: -1,
    });
    const unknown = await c.request(ApiKey.DescribeCluster, 1, {
      includeClusterAuthorizedOperations: false,
      endpointType: 7,
    });
    expect(unknown).toMatchObject({
      errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
      errorMessage: 'Unsupported endpoint type 7',
      brokers: [],
    });
  });
});

describe('OffsetForLeaderEpoch', () => {
  const ask = (v: number, topic: string, partition: number, leaderEpoch: number, current = -1) =>
    c.request(ApiKey.OffsetForLeaderEpoch, v, {
      replicaId: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: current, leaderEpoch }] }],
    });
  const only = (res: Message) => (res.topics as Message[])[0].partitions[0] as Message;

  it.each([0, 1, 2, 3, 4])(
    'v%i answers epoch 0 with the log end offset, and a later epoch with no end offset',
    async (v) => {
      // v0 has no leader epoch in the answer: it decodes as Kafka's default, -1.
      expect(only(await ask(v, 'epochs', 0, 0))).toEqual({
        errorCode: ErrorCode.NONE,
        partition: 0,
        leaderEpoch: v === 0 ? -1 : 0,
        endOffset: 3n,
      });
      expect(only(await ask(v, 'epochs', 0, 1))).toEqual({
        errorCode: ErrorCode.NONE,
        partition: 0,
        leaderEpoch: -1,
        endOffset: -1n,
      });
    },
  );

  it.each([0, 4])(
    'v%i answers an empty log with epoch 0 ending at offset 0, as Kafka records it at leadership',
    async (v) => {
      expect(only(await ask(v, 'epochs', 1, 0))).toEqual({
        errorCode: ErrorCode.NONE,
        partition: 1,
        // v0 answers no epoch (its default, -1, is what decodes).
        leaderEpoch: v >= 1 ? 0 : -1,
        endOffset: 0n,
      });
    },
  );

  it('answers an epoch below the first with the first offset of epoch 0, the log start', async () => {
    await c.request(ApiKey.DeleteRecords, 1, {
      topics: [{ name: 'dirs', partitions: [{ partitionIndex: 2, offset: 1n }] }],
      timeoutMs: 1000,
    });
    expect(only(await ask(4, 'dirs', 2, -2))).toEqual({
      errorCode: ErrorCode.NONE,
      partition: 2,
      leaderEpoch: -2,
      endOffset: 1n,
    });
  });

  it.each([2, 3, 4])(
    'v%i fences a current leader epoch: above 0 is unknown, below it fenced, -1 means none given',
    async (v) => {
      expect(only(await ask(v, 'epochs', 0, 0, 1)).errorCode).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH);
      expect(only(await ask(v, 'epochs', 0, 0, -3)).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
      expect(only(await ask(v, 'epochs', 0, 0, 0))).toMatchObject({ errorCode: 0, endOffset: 3n });
      expect(only(await ask(v, 'epochs', 0, 0, -1))).toMatchObject({ errorCode: 0, endOffset: 3n });
    },
  );

  it('answers an unknown topic or partition by name, and every partition asked in order', async () => {
    const res = await c.request(ApiKey.OffsetForLeaderEpoch, 4, {
      replicaId: -1,
      topics: [
        {
          topic: 'epochs',
          partitions: [
            { partition: 9, currentLeaderEpoch: -1, leaderEpoch: 0 },
            { partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 },
          ],
        },
        {
          topic: 'no-such-topic',
          partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }],
        },
      ],
    });
    expect(res).toEqual({
      throttleTimeMs: 0,
      topics: [
        {
          topic: 'epochs',
          partitions: [
            {
              errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              partition: 9,
              leaderEpoch: -1,
              endOffset: -1n,
            },
            { errorCode: 0, partition: 0, leaderEpoch: 0, endOffset: 3n },
          ],
        },
        {
          topic: 'no-such-topic',
          partitions: [
            {
              errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              partition: 0,
              leaderEpoch: -1,
              endOffset: -1n,
            },
          ],
        },
      ],
    });
  });
});

describe('DescribeLogDirs', () => {
  /** Bytes of the partition's segment files, as the directory shows them. */
  const bytesOnDisk = (topic: string, partition: number) => {
    const dir = join(raw.broker().dataDir, `${topic}-${partition}`);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .reduce((sum, f) => sum + BigInt(statSync(join(dir, f)).size), 0n);
  };

  it.each([0, 1, 2, 3, 4])(
    'v%i with null topics describes the data dir and every partition, sized as its segments are on disk',
    async (v) => {
      const res = await c.request(ApiKey.DescribeLogDirs, v, { topics: null });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.results).toHaveLength(1);
      const [dir] = res.results as Message[];
      expect(dir.errorCode).toBe(ErrorCode.NONE);
      expect(dir.logDir).toBe(raw.broker().dataDir);
      const names = (dir.topics as Message[]).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['__consumer_offsets', 'epochs', 'dirs']));
      const dirs = (dir.topics as Message[]).find((t) => t.name === 'dirs')!;
      expect(dirs.partitions).toEqual(
        [0, 1, 2].map((p) => ({
          partitionIndex: p,
          partitionSize: bytesOnDisk('dirs', p),
          offsetLag: 0n,
          isFutureKey: false,
        })),
      );
      expect(dirs.partitions[0].partitionSize).toBeGreaterThan(0n);
      expect(dirs.partitions[1].partitionSize).toBe(0n);
    },
  );

  it('v4 answers the volume sizes of the data dir, v3 and below carry none', async () => {
    const fs = statfsSync(raw.broker().dataDir, { bigint: true });
    const v4 = (await c.request(ApiKey.DescribeLogDirs, 4, { topics: [] })).results[0];
    expect(v4.totalBytes).toBe(fs.blocks * fs.bsize);
    expect(v4.usableBytes).toBeGreaterThan(0n);
    expect(v4.usableBytes).toBeLessThanOrEqual(v4.totalBytes);
    const v3 = (await c.request(ApiKey.DescribeLogDirs, 3, { topics: [] })).results[0];
    expect(v3).toMatchObject({ totalBytes: -1n, usableBytes: -1n });
  });

  it('describes only the listed partitions that exist, leaving out unknown ones', async () => {
    const res = await c.request(ApiKey.DescribeLogDirs, 2, {
      topics: [
        { topic: 'dirs', partitions: [2, 0, 7] },
        { topic: 'no-such-topic', partitions: [0] },
        { topic: 'epochs', partitions: [5] },
      ],
    });
    expect(res.results[0].topics).toEqual([
      {
        name: 'dirs',
        partitions: [0, 2].map((p) => ({
          partitionIndex: p,
          partitionSize: bytesOnDisk('dirs', p),
          offsetLag: 0n,
          isFutureKey: false,
        })),
      },
    ]);
  });
});

describe('DescribeTopicPartitions', () => {
  const describeTopics = (
    names: string[],
    responsePartitionLimit = 2000,
    cursor: { topicName: string; partitionIndex: number } | null = null,
  ) =>
    c.request(ApiKey.DescribeTopicPartitions, 0, {
      topics: names.map((name) => ({ name })),
      responsePartitionLimit,
      cursor,
    });
  const pages = (res: Message) =>
    (res.topics as Message[]).map((t) => [
      t.name,
      (t.partitions as Message[]).map((p) => p.partitionIndex),
    ]);

  it('describes listed topics as Metadata does, with empty eligible leader replicas', async () => {
    const metadata = await c.request(ApiKey.Metadata, 10, {
      topics: [{ topicId: ZERO_UUID, name: 'paged-b' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: true,
    });
    const res = await describeTopics(['paged-b']);
    expect(res).toEqual({
      throttleTimeMs: 0,
      topics: [
        {
          errorCode: 0,
          name: 'paged-b',
          topicId: metadata.topics[0].topicId,
          isInternal: false,
          partitions: [0, 1].map((p) => ({
            errorCode: 0,
            partitionIndex: p,
            leaderId: 1,
            leaderEpoch: 0,
            replicaNodes: [1],
            isrNodes: [1],
            eligibleLeaderReplicas: [],
            lastKnownElr: [],
            offlineReplicas: [],
          })),
          topicAuthorizedOperations: metadata.topics[0].topicAuthorizedOperations,
        },
      ],
      nextCursor: null,
    });
    expect(res.topics[0].topicId).not.toBe(ZERO_UUID);
  });

  it('answers unknown topics by name, and an illegal name as an invalid topic', async () => {
    const res = await describeTopics(['no-such-topic', 'bad name!', 'paged-b']);
    expect(res.topics).toMatchObject([
      {
        name: 'bad name!',
        errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
        topicId: ZERO_UUID,
        partitions: [],
      },
      { name: 'no-such-topic', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partitions: [] },
      { name: 'paged-b', errorCode: 0 },
    ]);
  });

  it('pages by partitions in name order, and the cursor resumes where the last page ended', async () => {
    const first = await describeTopics(['paged-b', 'paged-a'], 3);
    expect(pages(first)).toEqual([['paged-a', [0, 1, 2]]]);
    expect(first.nextCursor).toEqual({ topicName: 'paged-a', partitionIndex: 3 });
    const second = await describeTopics(['paged-b', 'paged-a'], 3, first.nextCursor);
    expect(pages(second)).toEqual([
      ['paged-a', [3, 4]],
      ['paged-b', [0]],
    ]);
    expect(second.nextCursor).toEqual({ topicName: 'paged-b', partitionIndex: 1 });
    const last = await describeTopics(['paged-b', 'paged-a'], 3, second.nextCursor);
    expect(pages(last)).toEqual([['paged-b', [1]]]);
    expect(last.nextCursor).toBeNull();
  });

  it('points the cursor at the next topic when the limit runs out at the end of one', async () => {
    const res = await describeTopics(['paged-a', 'paged-b'], 5);
    expect(pages(res)).toEqual([['paged-a', [0, 1, 2, 3, 4]]]);
    expect(res.nextCursor).toEqual({ topicName: 'paged-b', partitionIndex: 0 });
  });

  it('treats a limit below 1 as 1', async () => {
    const res = await describeTopics(['paged-b'], 0);
    expect(pages(res)).toEqual([['paged-b', [0]]]);
    expect(res.nextCursor).toEqual({ topicName: 'paged-b', partitionIndex: 1 });
  });

  it('with no topics listed describes every topic in name order, from the cursor on', async () => {
    const all = await describeTopics([]);
    const names = (all.topics as Message[]).map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(
      expect.arrayContaining(['__consumer_offsets', 'dirs', 'epochs', 'paged-a']),
    );
    expect(all.topics.find((t: Message) => t.name === '__consumer_offsets').isInternal).toBe(true);
    const fromCursor = await describeTopics([], 2000, { topicName: 'paged-a', partitionIndex: 4 });
    expect(pages(fromCursor)).toEqual([
      ['paged-a', [4]],
      ['paged-b', [0, 1]],
    ]);
  });

  it('refuses a cursor on a topic not listed, or at a negative partition, as an invalid request', async () => {
    const notListed = await describeTopics(['paged-b'], 10, {
      topicName: 'paged-a',
      partitionIndex: 0,
    });
    expect(notListed.topics).toEqual([
      {
        errorCode: ErrorCode.INVALID_REQUEST,
        name: 'paged-b',
        topicId: ZERO_UUID,
        isInternal: false,
        partitions: [],
        topicAuthorizedOperations: NOT_ASKED,
      },
    ]);
    const negative = await describeTopics(['paged-a'], 10, {
      topicName: 'paged-a',
      partitionIndex: -1,
    });
    expect(negative.topics).toMatchObject([
      { errorCode: ErrorCode.INVALID_REQUEST, name: 'paged-a', partitions: [] },
    ]);
  });
});
