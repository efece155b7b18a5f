import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kafka } from './helpers/kafkajs.ts';
import { kcat } from './helpers/kcat.ts';

let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker({ config: { 'num.partitions': 3 } });
});
afterAll(() => b?.stop());

describe('kafkajs consumer against the embedded broker', () => {
  it('reads everything from the beginning, in order per partition, including librdkafka-produced lz4', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `key-${i % 13}:value-${i}`);
    await kcat(
      ['-b', b.bootstrap, '-P', '-t', 'from-start', '-K:', '-X', 'compression.codec=lz4'],
      `${lines.join('\n')}\n`,
    );
    const consumer = kafka(b.bootstrap).consumer({ groupId: 'readers', maxWaitTimeInMs: 100 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: 'from-start', fromBeginning: true });
      const seen: Array<{ partition: number; offset: number; key: string; value: string }> = [];
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachMessage: async ({ partition, message }) => {
              seen.push({
                partition,
                offset: Number(message.offset),
                key: message.key!.toString(),
                value: message.value!.toString(),
              });
              if (seen.length === lines.length) resolve();
            },
          })
          .catch(reject);
      });
      expect(seen.map((r) => `${r.key}:${r.value}`).sort()).toEqual([...lines].sort());
      for (const p of [0, 1, 2]) {
        const values = seen.filter((r) => r.partition === p).map((r) => Number(r.value.slice(6)));
        expect(values).toEqual([...values].sort((x, y) => x - y));
      }
    } finally {
      await consumer.disconnect();
    }
  });
});
