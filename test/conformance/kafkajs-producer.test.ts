import { CompressionTypes, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kafka } from './helpers/kafkajs.ts';
import { consumeAll } from './helpers/kcat.ts';

let b: TestBroker;
let producer: Producer;

beforeAll(async () => {
  b = await startTestBroker({ config: { 'num.partitions': 2 } });
  producer = kafka(b.bootstrap).producer({ allowAutoTopicCreation: true });
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await b?.stop();
});

const messages = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i % 7}`, value: `${prefix}-${i}` }));

describe('kafkajs producer against the embedded broker, read back by librdkafka', () => {
  it.each([1, -1])('acks=%i answers with the assigned base offsets', async (acks) => {
    const topic = `acks${acks}`;
    const first = await producer.send({ topic, acks, messages: messages('a', 50) });
    const second = await producer.send({ topic, acks, messages: messages('b', 50) });
    for (const r of first)
      expect(r).toMatchObject({ topicName: topic, errorCode: 0, baseOffset: '0' });
    const counts = new Map(first.map((r) => [r.partition, 0]));
    const records = await consumeAll(b.bootstrap, topic);
    for (const r of records) counts.set(r.partition, (counts.get(r.partition) ?? 0) + 1);
    for (const r of second) {
      // The second batch of each partition starts where the first ended.
      const firstCount = records.filter(
        (x) => x.partition === r.partition && x.value!.startsWith('a-'),
      ).length;
      expect(r.baseOffset).toBe(String(firstCount));
    }
    expect(records).toHaveLength(100);
  });

  it('acks=0 appends without an answer', async () => {
    await producer.send({ topic: 'acks0', acks: 0, messages: messages('z', 30) });
    // A later request on the same connection is handled after the acks=0 one.
    await producer.send({ topic: 'acks0', acks: 1, messages: [{ key: 'k0', value: 'last' }] });
    const values = (await consumeAll(b.bootstrap, 'acks0')).map((r) => r.value);
    expect(values).toHaveLength(31);
    expect(values).toEqual(expect.arrayContaining(['z-0', 'z-29', 'last']));
  });

  it.each([
    ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy],
    ['lz4', CompressionTypes.LZ4],
    ['zstd', CompressionTypes.ZSTD],
  ] as const)(
    '%s batches are stored as sent and decoded by librdkafka',
    async (name, compression) => {
      const topic = `kafkajs-${name}`;
      const sent = messages(name, 500);
      await producer.send({ topic, compression, messages: sent });
      const got = (await consumeAll(b.bootstrap, topic)).map((r) => `${r.key}=${r.value}`);
      expect(got.sort()).toEqual(sent.map((m) => `${m.key}=${m.value}`).sort());
    },
  );

  it('keyless records to a compacted topic are refused with INVALID_RECORD', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: [
          { topic: 'compacted', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
        ],
      });
    } finally {
      await admin.disconnect();
    }
    await expect(
      producer.send({ topic: 'compacted', messages: [{ value: 'no key' }] }),
    ).rejects.toThrow(/failed the validation/);
  });
});
