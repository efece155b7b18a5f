/**
 * The protocol client's transactional producer against the embedded broker, read back
 * by independent readers (kafkajs in both isolation levels, and the project's own
 * read_committed reader): commits are seen, aborts are not, offsets commit with the
 * transaction, and a second producer with the same transactional id fences the first.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import { GroupConsumer } from '../../../src/protocol/client/group-consumer.ts';
import type { ProducerRecord } from '../../../src/protocol/client/producer.ts';
import {
  ProducerFencedError,
  TransactionAbortableError,
} from '../../../src/protocol/client/transaction-errors.ts';
import {
  TransactionalProducer,
  type TransactionalProducerOptions,
} from '../../../src/protocol/client/transactional-producer.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { useBroker } from '../../helpers/broker.ts';
import { waitFor } from '../../helpers/wait.ts';
import { readCommitted, readWithKafkajs } from './helpers/transaction-reader.ts';

const config = { 'transaction.state.log.num.partitions': 3 };

async function createTopic(bootstrap: string, topic: string, numPartitions: number) {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions }] });
  await admin.disconnect();
}

async function producer(
  bootstrap: string,
  options: Partial<TransactionalProducerOptions> = {},
): Promise<TransactionalProducer> {
  const p = new TransactionalProducer(new ClusterClient(bootstrap, { clientId: 'txn-test' }), {
    transactionalId: 'txn-a',
    ...options,
  });
  onTestFinished(() => p.close());
  await p.init();
  return p;
}

const records = (topic: string, values: string[]): ProducerRecord[] =>
  values.map((v, i) => ({
    topic,
    partition: i % 2,
    key: Buffer.from(`k${i}`),
    value: Buffer.from(v),
    timestamp: null,
    headers: [],
  }));

/** What the project's GroupConsumer hands over from `topic`, until each partition's 'end'. */
async function consumeWithGroupConsumer(
  bootstrap: string,
  topic: string,
  partitions: number,
  readCommitted: boolean,
): Promise<string[]> {
  const seen: string[] = [];
  const quiet = () => {};
  const consumer = new GroupConsumer({
    client: new ClusterClient(bootstrap, { clientId: 'rc-test' }),
    groupId: `rc-${readCommitted}-${Math.random()}`,
    subscription: { topics: [topic], regex: null },
    logger: { debug: quiet, info: quiet, warn: quiet },
    sessionTimeoutMs: 6000,
    heartbeatIntervalMs: 500,
    rebalanceTimeoutMs: 10_000,
    fetchMaxBytes: 1024 * 1024,
    maxPartitionFetchBytes: 1024 * 1024,
    fetchMinBytes: 1,
    fetchMaxWaitMs: 50,
    autoOffsetReset: 'earliest',
    readCommitted,
    allowAutoTopicCreation: false,
    metadataMaxAgeMs: 5000,
    retryBackoffMs: 50,
    requestTimeoutMs: 10_000,
  });
  consumer.start({
    onRevoking: async () => {},
    onAssigned: async () => {},
    onBatch: async (batch) => {
      for (const r of batch.records) seen.push(r.value?.toString() ?? 'null');
    },
    onFatal: () => {},
  });
  try {
    await waitFor(`'end' in every partition of ${topic}`, () =>
      seen.filter((v) => v === 'end').length >= partitions ? true : undefined,
    );
  } finally {
    await consumer.stop();
  }
  return seen;
}

describe('transactional producer', () => {
  it('shows committed transactions to read_committed readers and hides aborted ones', async () => {
    const b = await useBroker({ config });
    await createTopic(b.bootstrap, 'out', 2);
    const p = await producer(b.bootstrap);

    p.beginTransaction();
    await p.send(records('out', ['c1', 'c2']));
    await p.send(records('out', ['c3', 'c4']));
    await p.commitTransaction();
    p.beginTransaction();
    await p.send(records('out', ['a1', 'a2', 'a3']));
    await p.abortTransaction();
    p.beginTransaction();
    await p.send(records('out', ['end', 'end']));
    await p.commitTransaction();

    const committed = ['c1', 'c2', 'c3', 'c4', 'end', 'end'];
    const ours = await readCommitted(b.bootstrap, 'out', 2);
    expect(ours.map((r) => r.value!.toString()).sort()).toEqual([...committed].sort());
    const kafkajsCommitted = await readWithKafkajs(b.bootstrap, 'out', 'end', 2, false);
    expect(kafkajsCommitted.sort()).toEqual([...committed].sort());
    const uncommitted = await readWithKafkajs(b.bootstrap, 'out', 'end', 2, true);
    expect(uncommitted.sort()).toEqual([...committed, 'a1', 'a2', 'a3'].sort());
    // The project's group consumer, in both isolation levels (markers never handed over).
    const groupCommitted = await consumeWithGroupConsumer(b.bootstrap, 'out', 2, true);
    expect(groupCommitted.sort()).toEqual([...committed].sort());
    const groupUncommitted = await consumeWithGroupConsumer(b.bootstrap, 'out', 2, false);
    expect(groupUncommitted.sort()).toEqual([...committed, 'a1', 'a2', 'a3'].sort());
  });

  it('commits consumer offsets with the transaction, and not with an abort', async () => {
    const b = await useBroker({ config });
    await createTopic(b.bootstrap, 'out', 2);
    await createTopic(b.bootstrap, 'in', 1);
    const p = await producer(b.bootstrap, { maxBlockMs: 5000 });
    const group = { groupId: 'copier' };

    p.beginTransaction();
    await p.send(records('out', ['x']));
    await p.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: 42 }], group);
    await p.commitTransaction();
    p.beginTransaction();
    await p.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: 99 }], group);
    await p.abortTransaction();

    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    onTestFinished(() => admin.disconnect());
    const [fetched] = await admin.fetchOffsets({ groupId: 'copier', topics: ['in'] });
    expect(fetched!.partitions).toEqual([{ partition: 0, offset: '42', metadata: null }]);
  });

  it('is fenced by a newer producer with the same transactional id', async () => {
    const b = await useBroker({ config });
    await createTopic(b.bootstrap, 'out', 2);
    const zombie = await producer(b.bootstrap);
    zombie.beginTransaction();
    await zombie.send(records('out', ['zombie-1']));

    const successor = await producer(b.bootstrap);

    await expect(zombie.send(records('out', ['zombie-2']))).rejects.toBeInstanceOf(
      ProducerFencedError,
    );
    await expect(zombie.commitTransaction()).rejects.toThrow(
      /transactional producer 'txn-a' is fenced/,
    );
    expect(() => zombie.beginTransaction()).toThrow(ProducerFencedError);

    successor.beginTransaction();
    await successor.send(records('out', ['end']));
    await successor.commitTransaction();
    const seen = await readCommitted(b.bootstrap, 'out', 2);
    expect(seen.map((r) => r.value!.toString())).toEqual(['end']);
  });

  it('refuses to send outside a transaction, naming what to call', async () => {
    const b = await useBroker({ config });
    await createTopic(b.bootstrap, 'out', 2);
    const p = await producer(b.bootstrap);
    await expect(p.send(records('out', ['x']))).rejects.toThrow(/call beginTransaction\(\) first/);
  });

  it('after a failed send, only an abort is accepted, and the producer goes on', async () => {
    const b = await useBroker({ config });
    await createTopic(b.bootstrap, 'out', 2);
    const p = await producer(b.bootstrap);
    p.beginTransaction();
    const bad: ProducerRecord[] = [{ ...records('out', ['x'])[0]!, partition: 7 }];
    await expect(p.send(bad)).rejects.toBeInstanceOf(TransactionAbortableError);
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(TransactionAbortableError);
    await p.abortTransaction();
    p.beginTransaction();
    await p.send(records('out', ['end']));
    await p.commitTransaction();
    const seen = await readCommitted(b.bootstrap, 'out', 2);
    expect(seen.map((r) => r.value!.toString())).toEqual(['end']);
  });
});
