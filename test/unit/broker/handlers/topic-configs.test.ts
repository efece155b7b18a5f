/**
 * Every topic config Kafka defines, over the wire: CreateTopics takes each one,
 * DescribeConfigs lists each with its source, the ones this node cannot serve are
 * refused by name, and the ones with meaning here are honoured on Produce
 * (message.timestamp.*.max.ms as INVALID_TIMESTAMP record errors, min.insync.replicas
 * as NOT_ENOUGH_REPLICAS, compression.type=zstd as UNSUPPORTED_COMPRESSION_TYPE to
 * Fetch below v10; zstd batches in Produce below v7 are refused the same way).
 * ListGroups v4/v5 filters, and the request form librdkafka 2.0 sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicConfigDefs } from '../../../../src/broker/log/topic-config.ts';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { CompressionCodec } from '../../../../src/protocol/compression.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { ATTR_CODEC_MASK, ATTRIBUTES, encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';
import { RawClient } from '../server/raw-client.ts';

let b: TestBroker;
let c: RawClient;

beforeAll(async () => {
  b = await startTestBroker();
  c = await RawClient.connect(b.port);
});
afterAll(async () => {
  c?.close();
  await b?.stop();
});

const SOURCE_TOPIC = 1;
const SOURCE_DEFAULT = 5;

/** Kafka's topic config names (TopicConfig, LogConfig and QuotaConfig, 3.x and 4.0). */
const KAFKA_TOPIC_CONFIGS = [
  'cleanup.policy',
  'compression.gzip.level',
  'compression.lz4.level',
  'compression.type',
  'compression.zstd.level',
  'delete.retention.ms',
  'file.delete.delay.ms',
  'flush.messages',
  'flush.ms',
  'follower.replication.throttled.replicas',
  'index.interval.bytes',
  'leader.replication.throttled.replicas',
  'local.retention.bytes',
  'local.retention.ms',
  'max.compaction.lag.ms',
  'max.message.bytes',
  'message.format.version',
  'message.timestamp.after.max.ms',
  'message.timestamp.before.max.ms',
  'message.timestamp.difference.max.ms',
  'message.timestamp.type',
  'min.cleanable.dirty.ratio',
  'min.compaction.lag.ms',
  'min.insync.replicas',
  'preallocate',
  'remote.log.copy.disable',
  'remote.log.delete.on.disable',
  'remote.storage.enable',
  'retention.bytes',
  'retention.ms',
  'segment.bytes',
  'segment.index.bytes',
  'segment.jitter.ms',
  'segment.ms',
  'unclean.leader.election.enable',
];

/** A value other than the default for every key that takes one here. */
const SET_ALL: Record<string, string> = {
  'cleanup.policy': 'compact,delete',
  'compression.gzip.level': '6',
  'compression.lz4.level': '12',
  'compression.type': 'producer',
  'compression.zstd.level': '9',
  'delete.retention.ms': '1000',
  'file.delete.delay.ms': '2000',
  'flush.messages': '100',
  'flush.ms': '5000',
  'follower.replication.throttled.replicas': '0:1',
  'index.interval.bytes': '8192',
  'leader.replication.throttled.replicas': '*',
  'local.retention.bytes': '-2',
  'local.retention.ms': '-2',
  'max.compaction.lag.ms': '600000',
  'max.message.bytes': '2000000',
  'message.format.version': '2.8',
  'message.timestamp.after.max.ms': '3600000',
  'message.timestamp.before.max.ms': '86400000',
  'message.timestamp.difference.max.ms': '172800000',
  'message.timestamp.type': 'LogAppendTime',
  'min.cleanable.dirty.ratio': '0.3',
  'min.compaction.lag.ms': '10',
  'min.insync.replicas': '1',
  preallocate: 'true',
  'remote.log.copy.disable': 'false',
  'remote.log.delete.on.disable': 'false',
  'remote.storage.enable': 'false',
  'retention.bytes': '1000000',
  'retention.ms': '3600000',
  'segment.bytes': '2000000',
  'segment.index.bytes': '20000',
  'segment.jitter.ms': '60000',
  'segment.ms': '3600000',
  'unclean.leader.election.enable': 'true',
};

const createTopic = (name: string, configs: Record<string, string>) =>
  c.request(ApiKey.CreateTopics, 5, {
    topics: [
      {
        name,
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })),
      },
    ],
    timeoutMs: 1000,
    validateOnly: false,
  });

const describeTopic = async (name: string): Promise<Message[]> => {
  const answer = await c.request(ApiKey.DescribeConfigs, 4, {
    resources: [{ resourceType: 2, resourceName: name, configurationKeys: null }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  return answer.results[0].configs as Message[];
};

const produce = (topic: string, records: Buffer, acks = 1) =>
  c.request(ApiKey.Produce, 8, {
    transactionalId: null,
    acks,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  });

const batchAt = (timestamps: number[]) =>
  encodeBatch({
    records: timestamps.map((timestamp, i) => ({
      timestamp,
      key: Buffer.from(`k${i}`),
      value: Buffer.from(`v${i}`),
    })),
  });

describe('topic configs', () => {
  it('the broker defines every topic config Kafka defines, no more and no fewer', () => {
    expect(topicConfigDefs.map((d) => d.name).sort()).toEqual(KAFKA_TOPIC_CONFIGS);
  });

  it('CreateTopics takes every key; DescribeConfigs lists each as TOPIC_CONFIG, and a bare topic each as DEFAULT_CONFIG', async () => {
    const created = await createTopic('every-config', SET_ALL);
    expect(created.topics[0]).toMatchObject({ errorCode: 0, errorMessage: null });
    const described = await describeTopic('every-config');
    expect(Object.fromEntries(described.map((e) => [e.name, [e.value, e.configSource]]))).toEqual(
      Object.fromEntries(Object.entries(SET_ALL).map(([k, v]) => [k, [v, SOURCE_TOPIC]])),
    );

    await createTopic('bare-config', {});
    const bare = await describeTopic('bare-config');
    expect(bare.map((e) => e.name).sort()).toEqual(KAFKA_TOPIC_CONFIGS);
    expect(bare.filter((e) => e.configSource !== SOURCE_DEFAULT)).toEqual([]);
    const byName = Object.fromEntries(bare.map((e) => [e.name, e]));
    expect(byName['compression.type'].value).toBe('producer');
    expect(byName['min.insync.replicas'].value).toBe('1');
    expect(byName['remote.storage.enable']).toMatchObject({ value: 'false' });
    expect(byName['remote.storage.enable'].synonyms).toEqual([
      { name: 'remote.storage.enable', value: 'false', source: SOURCE_DEFAULT },
    ]);
    expect(byName['message.timestamp.before.max.ms'].synonyms).toEqual([
      {
        name: 'log.message.timestamp.before.max.ms',
        value: '9223372036854775807',
        source: SOURCE_DEFAULT,
      },
    ]);
  });

  it.each([
    [
      'remote.storage.enable',
      'true',
      /not supported: remote\.storage\.enable=true; .*tiered storage/,
    ],
    ['local.retention.ms', '60000', /not supported: local\.retention\.ms=60000; .*tiered storage/],
    ['local.retention.bytes', '1000', /not supported: local\.retention\.bytes=1000/],
    ['remote.log.copy.disable', 'true', /not supported: remote\.log\.copy\.disable=true/],
    ['segment.jitter.ms', '-1', /must be at least 0/],
    [
      'compression.type',
      'brotli',
      /must be one of uncompressed, zstd, lz4, snappy, gzip, producer/,
    ],
    ['compression.lz4.level', '18', /between 1 and 17/],
    ['message.format.version', '5.0', /Kafka version/],
    ['leader.replication.throttled.replicas', 'x', /partitionId:brokerId/],
  ])('%s=%s is refused by name with INVALID_CONFIG', async (key, value, message) => {
    const answer = await c.request(ApiKey.IncrementalAlterConfigs, 0, {
      resources: [
        {
          resourceType: 2,
          resourceName: 'bare-config',
          configs: [{ name: key, configOperation: 0, value }],
        },
      ],
      validateOnly: false,
    });
    expect(answer.responses[0].errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect(answer.responses[0].errorMessage).toMatch(message);
  });
});

describe('message.timestamp.before.max.ms and after.max.ms', () => {
  it('a batch with records outside the bounds is refused with INVALID_TIMESTAMP naming each such record', async () => {
    await createTopic('ts-bounds', {
      'message.timestamp.before.max.ms': '60000',
      'message.timestamp.after.max.ms': '60000',
    });
    const now = Date.now();
    const answer = await produce(
      'ts-bounds',
      batchAt([now, now - 3_600_000, now, now + 3_600_000]),
    );
    const p = answer.responses[0].partitionResponses[0];
    expect(p.errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(p.recordErrors.map((e: Message) => e.batchIndex)).toEqual([1, 3]);
    expect(p.recordErrors[0].batchIndexErrorMessage).toMatch(
      new RegExp(
        `^Timestamp ${now - 3_600_000} of message with offset 1 is out of range\\. The timestamp should be within \\[\\d+, \\d+\\]$`,
      ),
    );
    expect(p.errorMessage).toMatch(/2 record errors in total/);

    const ok = await produce('ts-bounds', batchAt([now, now + 1000]));
    expect(ok.responses[0].partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 0n });
  });

  it('the deprecated message.timestamp.difference.max.ms bounds both sides when they are not set', async () => {
    await createTopic('ts-difference', { 'message.timestamp.difference.max.ms': '60000' });
    const answer = await produce('ts-difference', batchAt([Date.now() - 3_600_000]));
    expect(answer.responses[0].partitionResponses[0]).toMatchObject({
      errorCode: ErrorCode.INVALID_TIMESTAMP,
      recordErrors: [{ batchIndex: 0 }],
    });
  });

  it('a LogAppendTime topic stamps the batch and checks no producer timestamp', async () => {
    await createTopic('ts-append-time', {
      'message.timestamp.type': 'LogAppendTime',
      'message.timestamp.before.max.ms': '1',
    });
    const answer = await produce('ts-append-time', batchAt([1000]));
    const p = answer.responses[0].partitionResponses[0];
    expect(p.errorCode).toBe(0);
    expect(Number(p.logAppendTimeMs)).toBeGreaterThan(1000);
  });
});

describe('min.insync.replicas', () => {
  it('above 1, acks=all is NOT_ENOUGH_REPLICAS (this node is the one replica) and nothing is appended; acks=1 is served', async () => {
    await createTopic('min-isr', { 'min.insync.replicas': '2' });
    const all = await produce('min-isr', batchAt([Date.now()]), -1);
    expect(all.responses[0].partitionResponses[0]).toMatchObject({
      errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
    });
    expect(all.responses[0].partitionResponses[0].errorMessage).toMatch(
      /min\.isr requirement of 2/,
    );
    const one = await produce('min-isr', batchAt([Date.now()]), 1);
    expect(one.responses[0].partitionResponses[0]).toMatchObject({ errorCode: 0, baseOffset: 0n });
  });
});

describe('zstd and old request versions (KIP-110)', () => {
  /** Fetch of partition 0 of each topic from offset 0, at `version` (v9: the last before zstd). */
  const fetchAt = async (version: number, topics: string[]) => {
    const answer = await c.request(ApiKey.Fetch, version, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: topics.map((topic) => ({
        topic,
        partitions: [
          {
            partition: 0,
            currentLeaderEpoch: -1,
            fetchOffset: 0n,
            logStartOffset: -1n,
            partitionMaxBytes: 1 << 20,
          },
        ],
      })),
      forgottenTopicsData: [],
      rackId: '',
    });
    return Object.fromEntries(
      (answer.responses as Message[]).map((t) => [t.topic, t.partitions[0] as Message]),
    );
  };
  const codecOf = (records: Buffer) => records.readInt16BE(ATTRIBUTES) & ATTR_CODEC_MASK;
  const zstdBatch = () =>
    encodeBatch({
      codec: CompressionCodec.zstd,
      records: [{ timestamp: Date.now(), key: Buffer.from('k'), value: Buffer.from('zstd') }],
    });

  it('Fetch v9 answers a compression.type=zstd partition UNSUPPORTED_COMPRESSION_TYPE and serves the gzip and uncompressed ones beside it; v10 serves all three', async () => {
    const topics = ['fetch-v9-zstd', 'fetch-v9-gzip', 'fetch-v9-plain'];
    await createTopic(topics[0], { 'compression.type': 'zstd' });
    await createTopic(topics[1], { 'compression.type': 'gzip' });
    await createTopic(topics[2], {});
    for (const t of topics) {
      const answer = await produce(t, batchAt([Date.now()]));
      expect(answer.responses[0].partitionResponses[0].errorCode).toBe(0);
    }

    const v9 = await fetchAt(9, topics);
    expect(v9[topics[0]]).toMatchObject({
      errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      highWatermark: -1n,
      logStartOffset: -1n,
    });
    expect(v9[topics[0]].records ?? Buffer.alloc(0)).toHaveLength(0);
    expect(v9[topics[1]]).toMatchObject({ errorCode: 0, highWatermark: 1n });
    expect(codecOf(v9[topics[1]].records)).toBe(CompressionCodec.gzip);
    expect(v9[topics[2]]).toMatchObject({ errorCode: 0, highWatermark: 1n });
    expect(codecOf(v9[topics[2]].records)).toBe(CompressionCodec.none);

    const v10 = await fetchAt(10, topics);
    expect(v10[topics[0]]).toMatchObject({ errorCode: 0, highWatermark: 1n });
    expect(codecOf(v10[topics[0]].records)).toBe(CompressionCodec.zstd);
  });

  it('Fetch v9 serves zstd batches a producer wrote to a compression.type=producer topic, as Kafka does: the check is the topic config', async () => {
    await createTopic('fetch-v9-producer-zstd', {});
    const produced = await c.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 1000,
      topicData: [
        { name: 'fetch-v9-producer-zstd', partitionData: [{ index: 0, records: zstdBatch() }] },
      ],
    });
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(0);
    const v9 = await fetchAt(9, ['fetch-v9-producer-zstd']);
    expect(v9['fetch-v9-producer-zstd'].errorCode).toBe(0);
    expect(codecOf(v9['fetch-v9-producer-zstd'].records)).toBe(CompressionCodec.zstd);
  });

  it('Produce below v7 with a zstd batch is UNSUPPORTED_COMPRESSION_TYPE and appends nothing; v7 appends it', async () => {
    await createTopic('produce-v6-zstd', {});
    const produceAt = (version: number, records: Buffer) =>
      c.request(ApiKey.Produce, version, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 1000,
        topicData: [{ name: 'produce-v6-zstd', partitionData: [{ index: 0, records }] }],
      });
    const v6 = await produceAt(6, zstdBatch());
    expect(v6.responses[0].partitionResponses[0]).toMatchObject({
      errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      baseOffset: -1n,
    });
    expect(
      (await produceAt(6, batchAt([Date.now()]))).responses[0].partitionResponses[0],
    ).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect((await produceAt(7, zstdBatch())).responses[0].partitionResponses[0]).toMatchObject({
      errorCode: 0,
      baseOffset: 1n,
    });
  });
});

describe('ListGroups', () => {
  it('v5 answers each group type and filters by type, v4 by state, both case-insensitively', async () => {
    const join = await c.request(ApiKey.JoinGroup, 5, {
      groupId: 'listed-classic',
      sessionTimeoutMs: 30000,
      rebalanceTimeoutMs: 30000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    expect(join.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const list = (version: number, statesFilter: string[], typesFilter: string[] = []) =>
      c
        .request(ApiKey.ListGroups, version, { statesFilter, typesFilter })
        .then((a) => (a.groups as Message[]).filter((g) => g.groupId === 'listed-classic'));
    const all = await list(5, []);
    expect(all).toEqual([
      {
        groupId: 'listed-classic',
        protocolType: '',
        groupState: 'Empty',
        groupType: 'classic',
      },
    ]);
    expect(await list(5, [], ['CLASSIC'])).toHaveLength(1);
    expect(await list(5, [], ['consumer'])).toEqual([]);
    expect(await list(4, ['empty'])).toHaveLength(1);
    expect(await list(4, ['Stable'])).toEqual([]);
  });

  it('a v4 request ending in a repeated empty tag section, as librdkafka 2.0 writes it, is served', async () => {
    // Header v2: api key 16, version 4, correlation id, client id "rdk", no tags;
    // body: an empty states filter, the body's tags, then librdkafka's second tags byte.
    const body = Buffer.from([
      0x00, 0x10, 0x00, 0x04, 0, 0, 0, 99, 0x00, 0x03, 0x72, 0x64, 0x6b, 0x00, 0x01, 0x00, 0x00,
    ]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]);
    const answer = await c.sendRaw(frame, true)!;
    expect(answer.readInt32BE(0)).toBe(99);
  });
});
