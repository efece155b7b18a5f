/**
 * Compaction keeps an idempotent producer's last batch with its records removed (so
 * its sequence state survives, as in Kafka), and a read stops at a segment's end. A
 * kafkajs consumer handed nothing but such a batch never advances; the broker leaves
 * those batches out of Fetch answers and reads on past them.
 */
import { describe, expect, it } from 'vitest';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBroker } from '../../helpers/broker.ts';

describe('compacted topics written by idempotent producers', () => {
  it('are read to the end by kafkajs after the cleaner empties a producer last batch', async () => {
    const b = await useBroker({ config: { 'log.cleaner.backoff.ms': 100 } });
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic: 'state',
          numPartitions: 1,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            // One batch per segment: every segment ends where a batch ends.
            { name: 'segment.bytes', value: '100' },
            { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            { name: 'min.compaction.lag.ms', value: '0' },
          ],
        },
      ],
    });
    await admin.disconnect();
    // The first producer's only batch is superseded by the second producer's write.
    for (const value of ['old', 'new']) {
      const producer = kafka(b.bootstrap).producer({ idempotent: true });
      await producer.connect();
      await producer.send({ topic: 'state', acks: -1, messages: [{ key: 'k1', value }] });
      await producer.disconnect();
    }
    const tail = kafka(b.bootstrap).producer({ idempotent: true });
    await tail.connect();
    await tail.send({ topic: 'state', acks: -1, messages: [{ key: 'k2', value: 'other' }] });
    await tail.disconnect();

    // Wait for the cleaner: offset 0 (k1=old) disappears.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const records = await consumeAll(b.bootstrap, 'state');
      if (!records.some((r) => r.offset === 0)) break;
      if (Date.now() > deadline) throw new Error('the cleaner did not run');
      await new Promise((r) => setTimeout(r, 200));
    }

    const consumer = kafka(b.bootstrap).consumer({
      groupId: 'state-readers',
      maxWaitTimeInMs: 100,
    });
    await consumer.connect();
    await consumer.subscribe({ topic: 'state', fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            seen.push(`${message.key}=${message.value}`);
            if (seen.length === 2) resolve();
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();
    expect(seen).toEqual(['k1=new', 'k2=other']);
  });
});
