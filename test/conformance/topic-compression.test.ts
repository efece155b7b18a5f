/**
 * compression.type on topics and on the broker: batches a kafkajs producer sends in
 * one codec are stored in the topic's, with their producer fields, flags and records
 * intact, as Kafka's LogValidator re-encodes them. The stored batches are read with a
 * raw Fetch (their attributes and CRC) and the records with librdkafka (kcat).
 */
import { CompressionTypes, type Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../src/protocol/api-keys.ts';
import { CompressionCodec } from '../../src/protocol/compression.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import {
  type BatchHeader,
  CorruptRecordError,
  checkBatch,
  decodeRecords,
  encodeBatch,
  RECORDS,
  readBatchHeader,
} from '../../src/protocol/record-batch.ts';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { fetchPartition, RawClient } from '../unit/broker/server/raw-client.ts';
import { kafka } from './helpers/kafkajs.ts';
import { consumeAll } from './helpers/kcat.ts';

let b: TestBroker;
let client: Kafka;
let raw: RawClient;

beforeAll(async () => {
  b = await startTestBroker();
  client = kafka(b.bootstrap);
  raw = await RawClient.connect(b.port);
});
afterAll(async () => {
  raw?.close();
  await b?.stop();
});

async function createTopic(k: Kafka, topic: string, configs: Record<string, string>) {
  const admin = k.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: 1,
          configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

/** Every stored batch of partition 0 (CRC checked) with its records' values. */
async function storedBatches(
  c: RawClient,
  topic: string,
): Promise<Array<{ header: BatchHeader; values: string[] }>> {
  const fetched = await fetchPartition(c, topic, 0, 0, { isolationLevel: 0 });
  const records: Buffer = fetched.responses[0].partitions[0].records;
  const out: Array<{ header: BatchHeader; values: string[] }> = [];
  for (let pos = 0; pos < records.length; ) {
    const size = checkBatch(records, pos, records.length, true);
    if (size instanceof CorruptRecordError) throw size;
    out.push({
      header: readBatchHeader(records, pos),
      values: decodeRecords(records, pos).map((r) => r.value?.toString() ?? ''),
    });
    pos += size;
  }
  return out;
}

const messages = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i % 3}`, value: `${prefix}-${i}`.repeat(4) }));

describe('topic compression.type re-encodes batches in the topic codec', () => {
  it.each([
    ['gzip', CompressionTypes.None, CompressionCodec.gzip],
    ['zstd', CompressionTypes.GZIP, CompressionCodec.zstd],
    ['snappy', CompressionTypes.ZSTD, CompressionCodec.snappy],
    ['uncompressed', CompressionTypes.Snappy, CompressionCodec.none],
    ['lz4', CompressionTypes.Snappy, CompressionCodec.lz4],
  ])(
    'compression.type=%s stores a batch sent in another codec in its own',
    async (type, sent, codec) => {
      const topic = `recompress-${type}`;
      await createTopic(client, topic, { 'compression.type': type });
      const producer = client.producer();
      await producer.connect();
      try {
        await producer.send({ topic, compression: sent, messages: messages('a', 20) });
        await producer.send({ topic, compression: sent, messages: messages('b', 5) });
      } finally {
        await producer.disconnect();
      }
      const batches = await storedBatches(raw, topic);
      expect(batches.map((x) => x.header.codec)).toEqual([codec, codec]);
      expect(batches.map((x) => x.header.baseOffset)).toEqual([0, 20]);
      const expected = [...messages('a', 20), ...messages('b', 5)].map((m) => m.value);
      expect(batches.flatMap((x) => x.values)).toEqual(expected);
      expect((await consumeAll(b.bootstrap, topic)).map((r) => r.value)).toEqual(expected);
    },
  );

  it('keeps the producer id, epoch and sequences of an idempotent producer', async () => {
    const topic = 'recompress-idempotent';
    await createTopic(client, topic, { 'compression.type': 'zstd' });
    const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: messages('i', 4) });
      await producer.send({ topic, acks: -1, messages: messages('j', 3) });
    } finally {
      await producer.disconnect();
    }
    const [first, second] = (await storedBatches(raw, topic)).map((x) => x.header);
    expect(first).toMatchObject({ codec: CompressionCodec.zstd, baseSequence: 0, baseOffset: 0 });
    expect(second).toMatchObject({ codec: CompressionCodec.zstd, baseSequence: 4, baseOffset: 4 });
    expect(first!.producerId).toBeGreaterThanOrEqual(0);
    expect(second!.producerId).toBe(first!.producerId);
    expect(second!.producerEpoch).toBe(first!.producerEpoch);
  });

  it('keeps the transactional flag; the commit marker stays an uncompressed control batch', async () => {
    const topic = 'recompress-txn';
    await createTopic(client, topic, { 'compression.type': 'gzip' });
    const producer = client.producer({
      transactionalId: 'recompress-txn-id',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: messages('t', 6) });
      await txn.commit();
    } finally {
      await producer.disconnect();
    }
    const [data, marker] = (await storedBatches(raw, topic)).map((x) => x.header);
    expect(data).toMatchObject({
      codec: CompressionCodec.gzip,
      transactional: true,
      control: false,
    });
    expect(marker).toMatchObject({
      codec: CompressionCodec.none,
      transactional: true,
      control: true,
    });
    expect((await consumeAll(b.bootstrap, topic)).map((r) => r.value)).toEqual(
      messages('t', 6).map((m) => m.value),
    );
  });

  it('stamps LogAppendTime on the re-encoded batch', async () => {
    const topic = 'recompress-log-append-time';
    await createTopic(client, topic, {
      'compression.type': 'snappy',
      'message.timestamp.type': 'LogAppendTime',
    });
    const producer = client.producer();
    await producer.connect();
    let answered: string | undefined;
    try {
      const [r] = await producer.send({
        topic,
        messages: messages('l', 3).map((m) => ({ ...m, timestamp: '1000' })),
      });
      answered = r?.logAppendTime;
    } finally {
      await producer.disconnect();
    }
    const [stored] = await storedBatches(raw, topic);
    expect(stored!.header).toMatchObject({ codec: CompressionCodec.snappy, logAppendTime: true });
    expect(String(stored!.header.maxTimestamp)).toBe(answered);
    expect(stored!.header.maxTimestamp).not.toBe(1000);
  });

  it('writes gzip at compression.gzip.level (the XFL byte of the gzip member says fastest or best)', async () => {
    const xfl = new Map<number, number>();
    for (const level of [1, 9]) {
      const topic = `recompress-gzip-level-${level}`;
      await createTopic(client, topic, {
        'compression.type': 'gzip',
        'compression.gzip.level': String(level),
      });
      const producer = client.producer();
      await producer.connect();
      try {
        await producer.send({ topic, messages: messages('g', 50) });
      } finally {
        await producer.disconnect();
      }
      const fetched = await fetchPartition(raw, topic, 0, 0, { isolationLevel: 0 });
      const records: Buffer = fetched.responses[0].partitions[0].records;
      expect(readBatchHeader(records, 0).codec).toBe(CompressionCodec.gzip);
      // RFC 1952: byte 8 of the member is XFL, 4 for the fastest level, 2 for the best.
      xfl.set(level, records[RECORDS + 8]!);
    }
    expect(Object.fromEntries(xfl)).toEqual({ 1: 4, 9: 2 });
  });

  it('refuses a batch that outgrows max.message.bytes once re-encoded (MESSAGE_TOO_LARGE)', async () => {
    const topic = 'recompress-too-large';
    await createTopic(client, topic, {
      'compression.type': 'uncompressed',
      'max.message.bytes': '2000',
    });
    const records = encodeBatch({
      codec: CompressionCodec.gzip,
      records: [{ timestamp: 1000, key: Buffer.from('k'), value: Buffer.alloc(10_000, 'x') }],
    });
    expect(records.length).toBeLessThan(2000);
    const res = await raw.request(ApiKey.Produce, 9, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    expect(res.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect(await storedBatches(raw, topic)).toEqual([]);
  });

  it('writes lz4 at compression.lz4.level, frames librdkafka reads (a higher level, a smaller frame)', async () => {
    const values = Array.from(
      { length: 400 },
      (_, i) => `{"id":${i},"name":"user ${i % 37}","score":${(i * 7) % 13},"tag":"t${i % 5}"}`,
    );
    const sizes = new Map<number, number>();
    for (const level of [1, 12]) {
      const topic = `recompress-lz4-level-${level}`;
      await createTopic(client, topic, {
        'compression.type': 'lz4',
        'compression.lz4.level': String(level),
      });
      const producer = client.producer();
      await producer.connect();
      try {
        await producer.send({ topic, messages: values.map((value) => ({ value })) });
      } finally {
        await producer.disconnect();
      }
      const stored = await storedBatches(raw, topic);
      expect(stored.map((s) => s.header.codec)).toEqual([CompressionCodec.lz4]);
      expect(stored[0]!.values).toEqual(values);
      const fetched = await fetchPartition(raw, topic, 0, 0, { isolationLevel: 0 });
      sizes.set(level, (fetched.responses[0].partitions[0].records as Buffer).length);
      expect((await consumeAll(b.bootstrap, topic)).map((r) => r.value)).toEqual(values);
    }
    expect(sizes.get(12)!).toBeLessThan(sizes.get(1)!);
  });
});

describe('broker compression.type', () => {
  let gzipBroker: TestBroker;
  beforeAll(async () => {
    gzipBroker = await startTestBroker({ config: { 'compression.type': 'gzip' } });
  });
  afterAll(async () => {
    await gzipBroker?.stop();
  });

  it('is the default of topics that set none', async () => {
    const k = kafka(gzipBroker.bootstrap);
    await createTopic(k, 'broker-default', {});
    const producer = k.producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'broker-default', messages: messages('d', 8) });
    } finally {
      await producer.disconnect();
    }
    const c = await RawClient.connect(gzipBroker.port);
    try {
      const batches = await storedBatches(c, 'broker-default');
      expect(batches.map((x) => x.header.codec)).toEqual([CompressionCodec.gzip]);
      expect(batches[0]!.values).toEqual(messages('d', 8).map((m) => m.value));
    } finally {
      c.close();
    }
  });
});
