/**
 * kafkajs 2.2.4's transactional producer against the embedded broker: what a
 * read_committed consumer (kafkajs' default isolation) sees of committed and aborted
 * transactions, consume-transform-produce with sendOffsets, and that neither kafkajs
 * nor kcat hands transaction markers to the application.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kafka } from './helpers/kafkajs.ts';
import { kcat } from './helpers/kcat.ts';

let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker({
    config: { 'num.partitions': 1, 'transaction.state.log.num.partitions': 3 },
  });
});
afterAll(() => b?.stop());

async function readAll(
  topic: string,
  groupId: string,
  until: (values: string[]) => boolean,
  readUncommitted = false,
): Promise<string[]> {
  const consumer = kafka(b.bootstrap).consumer({ groupId, maxWaitTimeInMs: 100, readUncommitted });
  await consumer.connect();
  const values: string[] = [];
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            values.push(message.value!.toString());
            if (until(values)) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return values;
}

describe('kafkajs transactions', () => {
  it('a read_committed consumer sees committed transactions and none of the aborted ones', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: 'txn-orders', numPartitions: 2 }, { topic: 'txn-audit' }],
    });
    await admin.disconnect();
    const producer = kafka(b.bootstrap).producer({
      transactionalId: 'kafkajs-orders',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const committed = await producer.transaction();
      await committed.send({
        topic: 'txn-orders',
        messages: [
          { key: 'a', value: 'order-1' },
          { key: 'b', value: 'order-2' },
        ],
      });
      await committed.send({ topic: 'txn-audit', messages: [{ value: 'audit-1' }] });
      await committed.commit();

      const aborted = await producer.transaction();
      await aborted.send({
        topic: 'txn-orders',
        messages: [
          { key: 'a', value: 'aborted-1' },
          { key: 'b', value: 'aborted-2' },
        ],
      });
      await aborted.send({ topic: 'txn-audit', messages: [{ value: 'aborted-audit' }] });
      await aborted.abort();

      const last = await producer.transaction();
      await last.send({ topic: 'txn-orders', messages: [{ key: 'a', value: 'order-3' }] });
      await last.commit();
    } finally {
      await producer.disconnect();
    }
    const orders = await readAll('txn-orders', 'orders-reader', (v) => v.includes('order-3'));
    expect(orders.sort()).toEqual(['order-1', 'order-2', 'order-3']);
    const audit = await readAll('txn-audit', 'audit-reader', (v) => v.includes('audit-1'));
    expect(audit).toEqual(['audit-1']);
    // read_uncommitted sees the aborted records too, and still no marker.
    const everything = await readAll(
      'txn-orders',
      'uncommitted-reader',
      (v) => v.length >= 5,
      true,
    );
    expect(everything.sort()).toEqual(['aborted-1', 'aborted-2', 'order-1', 'order-2', 'order-3']);

    // kcat (librdkafka) reads the partition whole: records only, never a marker.
    const kcatRead = async (isolation: string) =>
      (
        await kcat([
          '-b',
          b.bootstrap,
          '-C',
          '-t',
          'txn-audit',
          '-e',
          '-q',
          '-f',
          '%o:%s\\n',
          '-X',
          `isolation.level=${isolation}`,
        ])
      ).stdout
        .trim()
        .split('\n');
    // Offsets: audit-1 at 0, its COMMIT at 1, aborted-audit at 2, its ABORT at 3.
    expect(await kcatRead('read_committed')).toEqual(['0:audit-1']);
    expect(await kcatRead('read_uncommitted')).toEqual(['0:audit-1', '2:aborted-audit']);
  });

  it('consume-transform-produce commits the input offsets with the output, and an abort keeps neither', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'ctp-in' }, { topic: 'ctp-out' }] });
    const plain = kafka(b.bootstrap).producer();
    await plain.connect();
    await plain.send({ topic: 'ctp-in', messages: ['x', 'y', 'z'].map((value) => ({ value })) });
    await plain.disconnect();

    const producer = kafka(b.bootstrap).producer({
      transactionalId: 'ctp',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const t1 = await producer.transaction();
      await t1.send({ topic: 'ctp-out', messages: [{ value: 'X' }, { value: 'Y' }] });
      await t1.sendOffsets({
        consumerGroupId: 'ctp-group',
        topics: [{ topic: 'ctp-in', partitions: [{ partition: 0, offset: '2' }] }],
      });
      await t1.commit();
      expect(await admin.fetchOffsets({ groupId: 'ctp-group', topics: ['ctp-in'] })).toMatchObject([
        { topic: 'ctp-in', partitions: [{ partition: 0, offset: '2' }] },
      ]);

      const t2 = await producer.transaction();
      await t2.send({ topic: 'ctp-out', messages: [{ value: 'Z' }] });
      await t2.sendOffsets({
        consumerGroupId: 'ctp-group',
        topics: [{ topic: 'ctp-in', partitions: [{ partition: 0, offset: '3' }] }],
      });
      await t2.abort();
      expect(await admin.fetchOffsets({ groupId: 'ctp-group', topics: ['ctp-in'] })).toMatchObject([
        { topic: 'ctp-in', partitions: [{ partition: 0, offset: '2' }] },
      ]);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
    const out = await readAll('ctp-out', 'ctp-out-reader', (v) => v.length >= 2);
    expect(out).toEqual(['X', 'Y']);
  });
});
