import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { decodeRecords, encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';
import { fetchPartition, RawClient } from '../server/raw-client.ts';

let b: TestBroker;
let c: RawClient;

beforeAll(async () => {
  b = await startTestBroker({ config: { 'num.partitions': 2 } });
  c = await RawClient.connect(b.port);
});
afterAll(async () => {
  c?.close();
  await b?.stop();
});

const batch = (values: string[], timestamp = 1000, extra: Record<string, unknown> = {}) =>
  encodeBatch({
    records: values.map((v, i) => ({
      timestamp: timestamp + i,
      key: Buffer.from('k'),
      value: Buffer.from(v),
    })),
    ...extra,
  });

const produce = (topic: string, partition: number, records: Buffer, acks = 1, version = 7) =>
  c.request(ApiKey.Produce, version, {
    transactionalId: null,
    acks,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });

const fetch = (
  topic: string,
  partition: number,
  fetchOffset: number,
  extra: Record<string, unknown> = {},
) => fetchPartition(c, topic, partition, fetchOffset, extra);

describe('Metadata', () => {
  it('null topics means all, an empty list none, and a missing topic is auto-created with num.partitions', async () => {
    const created = await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'auto' }],
      allowAutoTopicCreation: true,
    });
    expect(created.topics).toMatchObject([
      { name: 'auto', errorCode: 0, partitions: [{ leaderId: 1 }, { leaderId: 1 }] },
    ]);
    expect(created.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: b.port, rack: null }]);
    expect(created.controllerId).toBe(1);
    expect(created.clusterId).toMatch(/^[\w-]{22}$/);
    expect((await c.request(ApiKey.Metadata, 1, { topics: [] })).topics).toEqual([]);
    expect(
      (await c.request(ApiKey.Metadata, 1, { topics: null })).topics.map(
        (t: { name: string }) => t.name,
      ),
    ).toContain('auto');
    expect(
      (await c.request(ApiKey.Metadata, 0, { topics: [] })).topics.map(
        (t: { name: string }) => t.name,
      ),
    ).toContain('auto');
  });

  it('does not create a topic when the client disallows it', async () => {
    const res = await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'not-created' }],
      allowAutoTopicCreation: false,
    });
    expect(res.topics).toMatchObject([
      { name: 'not-created', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
    ]);
  });
});

describe('Produce and Fetch', () => {
  it('echoes exactly the requested partitions with per-partition errors', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'echo' }],
      allowAutoTopicCreation: true,
    });
    const res = await c.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 1000,
      topicData: [
        {
          name: 'echo',
          partitionData: [
            { index: 1, records: batch(['a']) },
            { index: 7, records: batch(['b']) },
          ],
        },
        { name: 'nope', partitionData: [{ index: 0, records: batch(['c']) }] },
        {
          name: 'echo',
          partitionData: [
            {
              index: 0,
              records: Buffer.from('garbage that is no batch at all, not even close to one'),
            },
          ],
        },
      ],
    });
    expect(res.responses).toMatchObject([
      {
        name: 'echo',
        partitionResponses: [
          { index: 1, errorCode: 0, baseOffset: 0n },
          { index: 7, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
        ],
      },
      {
        name: 'nope',
        partitionResponses: [{ index: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }],
      },
      { name: 'echo', partitionResponses: [{ index: 0, errorCode: ErrorCode.CORRUPT_MESSAGE }] },
    ]);
  });

  it('serves stored batches with high watermark and log start, and OFFSET_OUT_OF_RANGE past the end', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'fetched' }],
      allowAutoTopicCreation: true,
    });
    await produce('fetched', 0, batch(['x', 'y']));
    await produce('fetched', 0, batch(['z']));
    const res = await fetch('fetched', 0, 1);
    const p = res.responses[0].partitions[0];
    expect(p).toMatchObject({
      errorCode: 0,
      highWatermark: 3n,
      lastStableOffset: 3n,
      logStartOffset: 0n,
      abortedTransactions: [],
      preferredReadReplica: -1,
    });
    expect(decodeRecords(p.records, 0).map((r) => [r.offset, r.value!.toString()])).toEqual([
      [0, 'x'],
      [1, 'y'],
    ]);
    const out = await fetch('fetched', 0, 10);
    expect(out.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  it('long-polls until data arrives when minBytes is not met', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'polled' }],
      allowAutoTopicCreation: true,
    });
    const other = await RawClient.connect(b.port);
    try {
      const waiting = other.request(ApiKey.Fetch, 11, {
        replicaId: -1,
        maxWaitMs: 60_000,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic: 'polled',
            partitions: [
              {
                partition: 0,
                currentLeaderEpoch: -1,
                fetchOffset: 0,
                logStartOffset: -1,
                partitionMaxBytes: 1 << 20,
              },
            ],
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      });
      let answered = false;
      void waiting.then(() => {
        answered = true;
      });
      await c.request(ApiKey.ApiVersions, 0, {});
      expect(answered).toBe(false);
      await produce('polled', 0, batch(['late']));
      const res = await waiting;
      expect(decodeRecords(res.responses[0].partitions[0].records, 0)[0]!.value!.toString()).toBe(
        'late',
      );
    } finally {
      other.close();
    }
  });

  it('acks=0 sends no answer but appends', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'fire' }],
      allowAutoTopicCreation: true,
    });
    c.send(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: 0,
      timeoutMs: 1000,
      topicData: [{ name: 'fire', partitionData: [{ index: 0, records: batch(['f']) }] }],
    });
    const res = await fetch('fire', 0, 0);
    expect(res.responses[0].partitions[0].highWatermark).toBe(1n);
  });

  it('refuses transactional batches of a producer id no transaction coordinator handed out', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'txn' }],
      allowAutoTopicCreation: true,
    });
    const res = await produce(
      'txn',
      0,
      batch(['t'], 1000, { transactional: true, producerId: 5, producerEpoch: 0, baseSequence: 0 }),
    );
    expect(res.responses[0].partitionResponses[0].errorCode).toBe(
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    );
  });
});

describe('idempotent sequences', () => {
  it('answers duplicates with their original offset, gaps and stale epochs with errors', async () => {
    const init = await c.request(ApiKey.InitProducerId, 1, {
      transactionalId: null,
      transactionTimeoutMs: 1000,
    });
    expect(init).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    const pid = Number(init.producerId);
    const next = await c.request(ApiKey.InitProducerId, 1, {
      transactionalId: null,
      transactionTimeoutMs: 1000,
    });
    expect(Number(next.producerId)).not.toBe(pid);
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'idem' }],
      allowAutoTopicCreation: true,
    });
    const b0 = batch(['a', 'b'], 1000, { producerId: pid, producerEpoch: 1, baseSequence: 0 });
    const b1 = batch(['c'], 1000, { producerId: pid, producerEpoch: 1, baseSequence: 2 });
    const first = (r: Message) => r.responses[0]!.partitionResponses[0];
    expect(first(await produce('idem', 0, b0))).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect(first(await produce('idem', 0, b1))).toMatchObject({ errorCode: 0, baseOffset: 2n });
    expect(first(await produce('idem', 0, Buffer.from(b0)))).toMatchObject({
      errorCode: 0,
      baseOffset: 0n,
    });
    const gap = batch(['d'], 1000, { producerId: pid, producerEpoch: 1, baseSequence: 9 });
    expect(first(await produce('idem', 0, gap))).toMatchObject({
      errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    const stale = batch(['e'], 1000, { producerId: pid, producerEpoch: 0, baseSequence: 3 });
    expect(first(await produce('idem', 0, stale))).toMatchObject({
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
    });
    expect((await fetch('idem', 0, 0)).responses[0].partitions[0].highWatermark).toBe(3n);
  });

  it('bumps the epoch of a transactional id on every InitProducerId', async () => {
    const init = () =>
      c.request(ApiKey.InitProducerId, 1, { transactionalId: 'tx', transactionTimeoutMs: 1000 });
    const first = await init();
    const second = await init();
    expect(first).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(second).toMatchObject({ errorCode: 0, producerId: first.producerId, producerEpoch: 1 });
  });
});

describe('ListOffsets', () => {
  it('answers earliest, latest and by timestamp, and v0 in the old format', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'timed' }],
      allowAutoTopicCreation: true,
    });
    await produce('timed', 0, batch(['a', 'b'], 1000));
    await produce('timed', 0, batch(['c', 'd'], 5000));
    const ask = (timestamp: number, version = 5) =>
      c
        .request(ApiKey.ListOffsets, version, {
          replicaId: -1,
          isolationLevel: 0,
          topics: [
            {
              name: 'timed',
              partitions: [
                {
                  partitionIndex: 0,
                  currentLeaderEpoch: -1,
                  timestamp: BigInt(timestamp),
                  maxNumOffsets: 1,
                },
              ],
            },
          ],
        })
        .then((r) => r.topics[0].partitions[0]);
    expect(await ask(-2)).toMatchObject({ errorCode: 0, offset: 0n });
    expect(await ask(-1)).toMatchObject({ errorCode: 0, offset: 4n });
    expect(await ask(4000)).toMatchObject({ offset: 2n, timestamp: 5000n });
    expect(await ask(9000)).toMatchObject({ offset: -1n });
    expect(await ask(-1, 0)).toMatchObject({ errorCode: 0, oldStyleOffsets: [4n] });
  });

  it('answers MAX_TIMESTAMP (v7+), EARLIEST_LOCAL (v8+) and LATEST_TIERED (v9+) as Kafka without tiered storage', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'maxts' }],
      allowAutoTopicCreation: true,
    });
    const ask = (timestamp: number, version: number, currentLeaderEpoch = -1) =>
      c
        .request(ApiKey.ListOffsets, version, {
          replicaId: -1,
          isolationLevel: 0,
          topics: [
            {
              name: 'maxts',
              partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp: BigInt(timestamp) }],
            },
          ],
          timeoutMs: 1000,
        })
        .then((r) => r.topics[0].partitions[0]);
    // Empty: no record has a timestamp.
    expect(await ask(-3, 7)).toMatchObject({ errorCode: 0, offset: -1n, timestamp: -1n });
    await produce('maxts', 0, batch(['a', 'b'], 1000)); // offsets 0-1
    await produce('maxts', 0, batch(['c'], 9000)); // offset 2: the largest
    await produce('maxts', 0, batch(['d', 'e'], 3000)); // offsets 3-4
    await produce('maxts', 0, batch(['f'], 9000)); // offset 5: as large, later
    for (const v of [7, 8, 9, 10]) {
      expect(await ask(-3, v), `v${v}`).toMatchObject({
        errorCode: 0,
        offset: 2n,
        timestamp: 9000n,
        leaderEpoch: 0,
      });
    }
    expect(await ask(-4, 8)).toMatchObject({ errorCode: 0, offset: 0n, timestamp: -1n });
    expect(await ask(-5, 9)).toMatchObject({ errorCode: 0, offset: -1n, leaderEpoch: -1 });
    // Each only from the version that defines it.
    expect(await ask(-3, 6)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await ask(-4, 7)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await ask(-5, 8)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    // The single node's partitions are at leader epoch 0.
    expect(await ask(-1, 10, 0)).toMatchObject({ errorCode: 0, offset: 6n });
    expect(await ask(-1, 10, 1)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH });
  });
});

describe('configs', () => {
  it('IncrementalAlterConfigs sets, appends, subtracts and deletes, and DescribeConfigs shows synonyms', async () => {
    await c.request(ApiKey.CreateTopics, 4, {
      topics: [
        { name: 'cfg', numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] },
      ],
      timeoutMs: 1000,
      validateOnly: false,
    });
    const alter = (
      configs: Array<{ name: string; configOperation: number; value: string | null }>,
    ) =>
      c.request(ApiKey.IncrementalAlterConfigs, 0, {
        resources: [{ resourceType: 2, resourceName: 'cfg', configs }],
        validateOnly: false,
      });
    expect(
      (await alter([{ name: 'retention.ms', configOperation: 0, value: '5000' }])).responses[0]
        .errorCode,
    ).toBe(0);
    expect(
      (await alter([{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }])).responses[0]
        .errorCode,
    ).toBe(0);
    const describe = () =>
      c
        .request(ApiKey.DescribeConfigs, 3, {
          resources: [
            {
              resourceType: 2,
              resourceName: 'cfg',
              configurationKeys: ['cleanup.policy', 'retention.ms'],
            },
          ],
          includeSynonyms: true,
          includeDocumentation: false,
        })
        .then((r) =>
          Object.fromEntries(r.results[0].configs.map((e: { name: string }) => [e.name, e])),
        );
    const after = await describe();
    expect(after['cleanup.policy']).toMatchObject({
      value: 'delete,compact',
      configSource: 1,
      configType: 7,
    });
    expect(after['retention.ms'].synonyms).toEqual([
      { name: 'retention.ms', value: '5000', source: 1 },
      { name: 'log.retention.ms', value: '604800000', source: 5 },
    ]);
    await alter([
      { name: 'cleanup.policy', configOperation: 3, value: 'delete' },
      { name: 'retention.ms', configOperation: 1, value: null },
    ]);
    const last = await describe();
    expect(last['cleanup.policy'].value).toBe('compact');
    expect(last['retention.ms']).toMatchObject({ value: '604800000', configSource: 5 });
    const bad = await alter([{ name: 'retention.ms', configOperation: 2, value: '1' }]);
    expect(bad.responses[0].errorCode).toBe(ErrorCode.INVALID_CONFIG);
  });
});

describe('Fetch v12 and leader epochs', () => {
  const fetch12 = (
    topic: string,
    fetchOffset: number,
    epochs: { lastFetchedEpoch?: number; currentLeaderEpoch?: number },
  ) =>
    c
      .request(ApiKey.Fetch, 12, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic,
            partitions: [
              {
                partition: 0,
                currentLeaderEpoch: epochs.currentLeaderEpoch ?? -1,
                fetchOffset: BigInt(fetchOffset),
                lastFetchedEpoch: epochs.lastFetchedEpoch ?? -1,
                logStartOffset: -1n,
                partitionMaxBytes: 1 << 20,
              },
            ],
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      })
      .then((r) => r.responses[0].partitions[0]);

  it('stamps the leader epoch on appended batches and checks last_fetched_epoch as Kafka does', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'epochs' }, { name: 'epochs-empty' }],
      allowAutoTopicCreation: true,
    });
    // A producer's own partitionLeaderEpoch is replaced by the leader's, as Kafka does.
    await produce('epochs', 0, batch(['a', 'b'], 1000, { partitionLeaderEpoch: 7 }));
    const read = await fetch12('epochs', 0, {});
    expect(read.errorCode).toBe(0);
    expect((read.records as Buffer).readInt32BE(12)).toBe(0);

    // The epoch the client read last, with an offset inside the log: records as usual.
    const same = await fetch12('epochs', 1, { lastFetchedEpoch: 0 });
    expect(same.errorCode).toBe(0);
    // Whole batches, as always: the one holding offset 1.
    expect(decodeRecords(same.records as Buffer, 0).map((r) => r.value?.toString())).toEqual([
      'a',
      'b',
    ]);
    expect(same.divergingEpoch).toMatchObject({ epoch: -1, endOffset: -1n });
    // Past the log end with the same epoch: the log diverged; truncate to its end.
    const ahead = await fetch12('epochs', 5, { lastFetchedEpoch: 0 });
    expect(ahead.errorCode).toBe(0);
    expect(ahead.divergingEpoch).toEqual({ epoch: 0, endOffset: 2n });
    expect((ahead.records as Buffer).length).toBe(0);
    // An epoch the log never had: the position is out of range.
    expect((await fetch12('epochs', 1, { lastFetchedEpoch: 3 })).errorCode).toBe(
      ErrorCode.OFFSET_OUT_OF_RANGE,
    );
    // An empty log has epoch 0 from offset 0 (recorded at leadership, as in Kafka).
    const empty = await fetch12('epochs-empty', 0, { lastFetchedEpoch: 0 });
    expect(empty.errorCode).toBe(0);
    expect(empty.divergingEpoch).toMatchObject({ epoch: -1, endOffset: -1n });
    expect((await fetch12('epochs-empty', 1, { lastFetchedEpoch: 0 })).divergingEpoch).toEqual({
      epoch: 0,
      endOffset: 0n,
    });
    // current_leader_epoch: 0 is the leader's, a later one unknown.
    expect((await fetch12('epochs', 0, { currentLeaderEpoch: 0 })).errorCode).toBe(0);
    expect((await fetch12('epochs', 0, { currentLeaderEpoch: 1 })).errorCode).toBe(
      ErrorCode.UNKNOWN_LEADER_EPOCH,
    );
  });
});

describe('JoinGroup v8/v9 and LeaveGroup v5', () => {
  it('tells a static leader rejoining unchanged to skip assigning (v9), and gives older versions no members', async () => {
    const join = (version: number, groupId: string) =>
      c.request(ApiKey.JoinGroup, version, {
        groupId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: '',
        groupInstanceId: 'instance-1',
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.from([0, 1]) }],
        reason: 'the test joins',
      });
    const sync = (version: number, groupId: string, memberId: string, generationId: number) =>
      c.request(ApiKey.SyncGroup, version, {
        groupId,
        generationId,
        memberId,
        groupInstanceId: 'instance-1',
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment: Buffer.from('p0') }],
      });
    for (const [version, groupId] of [
      [9, 'skip-9'],
      [8, 'skip-8'],
    ] as const) {
      const first = await join(version, groupId);
      expect(first.errorCode).toBe(0);
      expect(first.skipAssignment).toBe(false);
      expect((await sync(5, groupId, first.memberId, first.generationId)).errorCode).toBe(0);
      // The same instance again (a restart), same protocols, while the group is stable.
      const again = await join(version, groupId);
      expect(again.errorCode).toBe(0);
      expect(again.leader).toBe(again.memberId);
      expect(again.generationId).toBe(first.generationId);
      if (version >= 9) {
        expect(again.skipAssignment).toBe(true);
        expect(again.members.map((m: Message) => m.memberId)).toEqual([again.memberId]);
      } else {
        // A client before KIP-814 cannot be told to skip: no members, so it assigns nothing.
        expect(again.members).toEqual([]);
      }
      const left = await c.request(ApiKey.LeaveGroup, 5, {
        groupId,
        members: [{ memberId: again.memberId, groupInstanceId: 'instance-1', reason: 'done' }],
      });
      expect(left.errorCode).toBe(0);
      expect(left.members[0].errorCode).toBe(0);
    }
  });
});

describe('CreateTopics v5-v7', () => {
  it("answers the created topic's partitions, configs with their sources (KIP-525) and its id (v7)", async () => {
    const create = (version: number, name: string, validateOnly = false) =>
      c
        .request(ApiKey.CreateTopics, version, {
          topics: [
            {
              name,
              numPartitions: 3,
              replicationFactor: -1,
              assignments: [],
              configs: [{ name: 'cleanup.policy', value: 'compact' }],
            },
          ],
          timeoutMs: 5000,
          validateOnly,
        })
        .then((r) => r.topics[0]);
    const created = await create(7, 'described-on-create');
    expect(created).toMatchObject({ errorCode: 0, numPartitions: 3, replicationFactor: 1 });
    const byName = new Map((created.configs as Message[]).map((e) => [e.name, e]));
    expect(byName.get('cleanup.policy')).toMatchObject({
      value: 'compact',
      configSource: 1, // TOPIC_CONFIG
      readOnly: false,
      isSensitive: false,
    });
    expect(byName.get('retention.ms')).toMatchObject({ value: '604800000', configSource: 5 });
    // The same entries DescribeConfigs lists, and the id Metadata answers.
    const described = await c.request(ApiKey.DescribeConfigs, 4, {
      resources: [
        { resourceType: 2, resourceName: 'described-on-create', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    expect(
      (described.results[0].configs as Message[]).map((e) => [e.name, e.value, e.configSource]),
    ).toEqual((created.configs as Message[]).map((e) => [e.name, e.value, e.configSource]));
    const meta = await c.request(ApiKey.Metadata, 12, {
      topics: [{ name: 'described-on-create', topicId: '00000000-0000-0000-0000-000000000000' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(created.topicId).toBe(meta.topics[0].topicId);
    expect(created.topicId).not.toBe('00000000-0000-0000-0000-000000000000');
    // validateOnly answers what the topic would get, and creates nothing.
    const dry = await create(5, 'dry-run', true);
    expect(dry).toMatchObject({ errorCode: 0, numPartitions: 3 });
    expect((dry.configs as Message[]).find((e) => e.name === 'cleanup.policy')?.value).toBe(
      'compact',
    );
    // Before v5 the answer has none of it.
    const old = await create(4, 'created-at-v4');
    expect(old.configs ?? []).toEqual([]);
  });
});

describe('Metadata v10-v12', () => {
  const ZERO = '00000000-0000-0000-0000-000000000000';
  it('answers topic ids, looks topics up by id (v12), and authorized operations when asked', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'by-id' }],
      allowAutoTopicCreation: true,
    });
    const byName = await c.request(ApiKey.Metadata, 10, {
      topics: [{ name: 'by-id', topicId: ZERO }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: true,
      includeTopicAuthorizedOperations: true,
    });
    const id = byName.topics[0].topicId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(id).not.toBe(ZERO);
    // READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS: no ACLs.
    expect(byName.topics[0].topicAuthorizedOperations).toBe(0b1101_1111_1000);
    // CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE.
    expect(byName.clusterAuthorizedOperations).toBe(0b1_1111_1010_0000);

    const unknown = 'd5c8e6a1-0000-4000-8000-000000000001';
    const byId = await c.request(ApiKey.Metadata, 12, {
      topics: [
        { name: null, topicId: id },
        { name: null, topicId: unknown },
      ],
      allowAutoTopicCreation: true,
      includeTopicAuthorizedOperations: false,
    });
    expect(byId.topics).toHaveLength(2);
    expect(byId.topics[0]).toMatchObject({ errorCode: 0, name: 'by-id', topicId: id });
    expect(byId.topics[0].topicAuthorizedOperations).toBe(-2147483648);
    expect(byId.topics[1]).toMatchObject({
      errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
      name: null,
      topicId: unknown,
    });
    // v10 and v11 take names only, as Kafka.
    const v11 = await c.request(ApiKey.Metadata, 11, {
      topics: [{ name: 'by-id', topicId: id }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(v11.topics[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });
});

describe('DeleteTopics v6', () => {
  const ZERO = '00000000-0000-0000-0000-000000000000';
  it('deletes topics named by name or by id, and refuses what Kafka refuses', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'gone-by-id' }, { name: 'gone-by-name' }],
      allowAutoTopicCreation: true,
    });
    const ids = await c.request(ApiKey.Metadata, 12, {
      topics: [
        { name: 'gone-by-id', topicId: ZERO },
        { name: 'gone-by-name', topicId: ZERO },
      ],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const [byIdId, byNameId] = ids.topics.map((t: Message) => t.topicId as string);
    const unknownId = 'd5c8e6a1-0000-4000-8000-000000000002';
    const res = await c.request(ApiKey.DeleteTopics, 6, {
      topics: [
        { name: null, topicId: byIdId },
        { name: 'gone-by-name', topicId: ZERO },
        { name: null, topicId: unknownId },
        { name: 'no-such-topic', topicId: ZERO },
        { name: 'both', topicId: byNameId },
        { name: null, topicId: ZERO },
      ],
      timeoutMs: 5000,
    });
    expect(res.responses.map((r: Message) => [r.name, r.topicId, r.errorCode])).toEqual([
      ['gone-by-id', byIdId, 0],
      ['gone-by-name', byNameId, 0],
      [null, unknownId, ErrorCode.UNKNOWN_TOPIC_ID],
      ['no-such-topic', ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['both', byNameId, ErrorCode.INVALID_REQUEST],
      [null, ZERO, ErrorCode.INVALID_REQUEST],
    ]);
    const after = await c.request(ApiKey.Metadata, 12, {
      topics: [
        { name: null, topicId: byIdId },
        { name: null, topicId: byNameId },
      ],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(after.topics.map((t: Message) => t.errorCode)).toEqual([
      ErrorCode.UNKNOWN_TOPIC_ID,
      ErrorCode.UNKNOWN_TOPIC_ID,
    ]);
  });
});

describe('Fetch v13+ by topic id', () => {
  it('reads a topic named by its id and answers UNKNOWN_TOPIC_ID for an id no topic has', async () => {
    await c.request(ApiKey.Metadata, 8, {
      topics: [{ name: 'fetch-by-id' }],
      allowAutoTopicCreation: true,
    });
    await produce('fetch-by-id', 0, batch(['x', 'y']));
    const meta = await c.request(ApiKey.Metadata, 12, {
      topics: [{ name: 'fetch-by-id', topicId: '00000000-0000-0000-0000-000000000000' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const id = meta.topics[0].topicId as string;
    const unknown = 'd5c8e6a1-0000-4000-8000-000000000003';
    for (const version of [13, 15, 17]) {
      const res = await c.request(ApiKey.Fetch, version, {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [id, unknown].map((topicId) => ({
          topicId,
          partitions: [
            {
              partition: 0,
              currentLeaderEpoch: -1,
              fetchOffset: 0n,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
              partitionMaxBytes: 1 << 20,
            },
          ],
        })),
        forgottenTopicsData: [],
        rackId: '',
      });
      expect(
        res.responses.map((r: Message) => r.topicId),
        `v${version}`,
      ).toEqual([id, unknown]);
      const [found, missing] = res.responses.map((r: Message) => r.partitions[0]);
      expect(found.errorCode).toBe(0);
      expect(decodeRecords(found.records as Buffer, 0).map((r) => r.value?.toString())).toEqual([
        'x',
        'y',
      ]);
      expect(missing.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
    }
  });
});

describe('Produce v8+ record errors', () => {
  it('names every keyless record of a batch refused by a compacted topic, as Kafka does', async () => {
    await c.request(ApiKey.CreateTopics, 4, {
      topics: [
        {
          name: 'compacted-record-errors',
          numPartitions: 1,
          replicationFactor: -1,
          assignments: [],
          configs: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    const records = encodeBatch({
      records: Array.from({ length: 20 }, (_, i) => ({
        timestamp: 1000,
        key: i % 10 === 3 ? null : Buffer.from(`k${i}`),
        value: Buffer.from(`v${i}`),
      })),
    });
    const answer = await produce('compacted-record-errors', 0, records, 1, 8);
    const p = answer.responses[0].partitionResponses[0];
    expect(p.errorCode).toBe(ErrorCode.INVALID_RECORD);
    const message =
      'Compacted topic cannot accept message without key in topic partition compacted-record-errors-0';
    expect(p.recordErrors).toEqual([
      { batchIndex: 3, batchIndexErrorMessage: message },
      { batchIndex: 13, batchIndexErrorMessage: message },
    ]);
    expect(p.errorMessage).toBe(
      `One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=3, message='${message}'), RecordError(batchIndex=13, message='${message}')]`,
    );
    // Nothing of the batch was written.
    const read = await fetch('compacted-record-errors', 0, 0);
    expect(read.responses[0].partitions[0].highWatermark).toBe(0n);
  });
});
