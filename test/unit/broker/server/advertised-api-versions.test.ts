/**
 * Every version newly advertised in advertised-versions.ts is served: a flexible
 * version that only changes the encoding answers, for any input, exactly what the
 * version before answers (a property over generated names, through the broker and
 * the codec both ways); versions with new fields are checked field by field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { fetchPartition, useRawBroker } from './raw-client.ts';

const { client } = useRawBroker();

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);

interface Bump {
  api: string;
  apiKey: number;
  from: number;
  to: number;
  request(n: string): Message;
  /** Answer fields that legitimately differ between two requests (fresh member ids). */
  ignore?: readonly string[];
}

const ENCODING_ONLY: readonly Bump[] = [
  {
    api: 'Heartbeat',
    apiKey: ApiKey.Heartbeat,
    from: 3,
    to: 4,
    request: (n) => ({ groupId: n, generationId: 1, memberId: 'm', groupInstanceId: null }),
  },
  {
    api: 'SyncGroup',
    apiKey: ApiKey.SyncGroup,
    from: 3,
    to: 4,
    request: (n) => ({
      groupId: n,
      generationId: 1,
      memberId: 'm',
      groupInstanceId: null,
      assignments: [],
    }),
  },
  {
    api: 'LeaveGroup',
    apiKey: ApiKey.LeaveGroup,
    from: 3,
    to: 4,
    request: (n) => ({ groupId: n, members: [{ memberId: 'm', groupInstanceId: null }] }),
  },
  {
    api: 'DescribeGroups',
    apiKey: ApiKey.DescribeGroups,
    from: 4,
    to: 5,
    request: (n) => ({ groups: [n], includeAuthorizedOperations: false }),
  },
  {
    api: 'JoinGroup',
    apiKey: ApiKey.JoinGroup,
    from: 5,
    to: 6,
    request: (n) => ({
      groupId: n,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from([1]) }],
    }),
    ignore: ['memberId'],
  },
  {
    api: 'Metadata',
    apiKey: ApiKey.Metadata,
    from: 8,
    to: 9,
    request: (n) => ({ topics: [{ name: n }], allowAutoTopicCreation: false }),
  },
  {
    api: 'ListOffsets',
    apiKey: ApiKey.ListOffsets,
    from: 5,
    to: 6,
    request: (n) => ({
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: n, partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
    }),
  },
  {
    api: 'OffsetCommit',
    apiKey: ApiKey.OffsetCommit,
    from: 7,
    to: 8,
    request: (n) => ({
      groupId: n,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'committed', partitions: [{ partitionIndex: 0, committedOffset: 5n }] }],
    }),
  },
  {
    api: 'DeleteTopics',
    apiKey: ApiKey.DeleteTopics,
    from: 3,
    to: 4,
    request: (n) => ({ topicNames: [`absent-${n}`], timeoutMs: 1000 }),
  },
  {
    api: 'DescribeConfigs',
    apiKey: ApiKey.DescribeConfigs,
    from: 3,
    to: 4,
    request: (n) => ({
      resources: [{ resourceType: 2, resourceName: n, configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    }),
  },
];

function without(body: Message, keys: readonly string[]): Message {
  const copy = { ...body };
  for (const k of keys) delete copy[k];
  return copy;
}

describe('newly advertised flexible versions', () => {
  it.each(ENCODING_ONLY.map((b) => [`${b.api} v${b.to}`, b] as const))(
    '%s answers any request exactly as the version before',
    async (_label, bump) => {
      const c = await client();
      await fc.assert(
        fc.asyncProperty(name, async (n) => {
          const before = await c.request(bump.apiKey, bump.from, bump.request(n));
          const after = await c.request(bump.apiKey, bump.to, bump.request(n));
          expect(without(after, bump.ignore ?? [])).toEqual(without(before, bump.ignore ?? []));
        }),
        { numRuns: 5 },
      );
    },
  );

  it('Produce v9 appends a batch that Fetch reads back', async () => {
    const c = await client();
    const created = await c.request(ApiKey.CreateTopics, 4, {
      topics: [{ name: 'produce-v9', numPartitions: 1, replicationFactor: 1 }],
      timeoutMs: 5000,
    });
    expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
    const batch = encodeBatch({
      records: [{ timestamp: 1, key: Buffer.from('k'), value: Buffer.from('v9') }],
    });
    const produced = await c.request(ApiKey.Produce, 9, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: 'produce-v9', partitionData: [{ index: 0, records: batch }] }],
    });
    expect(produced.responses[0].partitionResponses[0]).toMatchObject({
      index: 0,
      errorCode: ErrorCode.NONE,
      baseOffset: 0n,
    });
    const fetched = await fetchPartition(c, 'produce-v9', 0, 0);
    const p = fetched.responses[0].partitions[0];
    expect(p.highWatermark).toBe(1n);
    expect(p.records.includes(Buffer.from('v9'))).toBe(true);
  });

  it('FindCoordinator v4 answers each key of the batch with this node (KIP-699)', async () => {
    const c = await client();
    const res = await c.request(ApiKey.FindCoordinator, 4, {
      keyType: 0,
      coordinatorKeys: ['g1', 'g2'],
    });
    const v3 = await c.request(ApiKey.FindCoordinator, 3, { key: 'g1', keyType: 0 });
    expect(res.coordinators).toEqual(
      ['g1', 'g2'].map((key) => ({
        key,
        nodeId: v3.nodeId,
        host: v3.host,
        port: v3.port,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
      })),
    );
  });

  it('OffsetFetch v8 answers each group of the batch as v7 answers it alone', async () => {
    const c = await client();
    await c.request(ApiKey.CreateTopics, 4, {
      topics: [{ name: 'offsets-v8', numPartitions: 1, replicationFactor: 1 }],
      timeoutMs: 5000,
    });
    for (const g of ['of-a', 'of-b']) {
      const committed = await c.request(ApiKey.OffsetCommit, 8, {
        groupId: g,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'offsets-v8', partitions: [{ partitionIndex: 0, committedOffset: 7n }] }],
      });
      expect(committed.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
    }
    const topics = [{ name: 'offsets-v8', partitionIndexes: [0] }];
    const batched = await c.request(ApiKey.OffsetFetch, 8, {
      groups: ['of-a', 'of-b'].map((groupId) => ({ groupId, topics })),
      requireStable: false,
    });
    for (const [i, g] of ['of-a', 'of-b'].entries()) {
      const alone = await c.request(ApiKey.OffsetFetch, 7, { groupId: g, topics });
      expect(batched.groups[i]).toMatchObject({
        groupId: g,
        errorCode: alone.errorCode,
        topics: alone.topics,
      });
    }
    expect(batched.groups[0].topics[0].partitions[0].committedOffset).toBe(7n);
  });

  it('JoinGroup v7 answers the protocol type, and SyncGroup v5 refuses a mismatched one (KIP-559)', async () => {
    const c = await client();
    const join = (memberId: string) =>
      c.request(ApiKey.JoinGroup, 7, {
        groupId: 'kip-559',
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.from([1]) }],
      });
    const first = await join('');
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const joined = await join(first.memberId);
    expect(joined).toMatchObject({
      errorCode: ErrorCode.NONE,
      protocolType: 'consumer',
      protocolName: 'range',
    });
    const sync = (protocolType: string) =>
      c.request(ApiKey.SyncGroup, 5, {
        groupId: 'kip-559',
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: null,
        protocolType,
        protocolName: 'range',
        assignments: [{ memberId: joined.memberId, assignment: Buffer.from([9]) }],
      });
    expect((await sync('connect')).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect(await sync('consumer')).toMatchObject({
      errorCode: ErrorCode.NONE,
      protocolType: 'consumer',
      protocolName: 'range',
      assignment: Buffer.from([9]),
    });
  });

  it('DeleteTopics v5 answers an error message with the error', async () => {
    const c = await client();
    const res = await c.request(ApiKey.DeleteTopics, 5, {
      topicNames: ['never-created'],
      timeoutMs: 1000,
    });
    expect(res.responses[0].errorCode).not.toBe(ErrorCode.NONE);
    expect(typeof res.responses[0].errorMessage).toBe('string');
  });
});
