/**
 * The protocol client's transactional producer against the embedded broker, read back
 * by independent readers (kafkajs in both isolation levels, and the project's own
 * read_committed reader): commits are seen, aborts are not, offsets commit with the
 * transaction, and a second producer with the same transactional id fences the first.
 * Also how it talks to the coordinator: the new partitions of concurrent sends go in
 * one AddPartitionsToTxn, sends to partitions already added do not wait for a pending
 * one, and InitProducerId is retried while the coordinator is busy or elsewhere.
 * One broker serves the file; each test has its own topics and transactional id.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { BrokerConnection } from '../../../src/protocol/client/broker-connection.ts';
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
import type { Message } from '../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { waitFor } from '../../helpers/wait.ts';
import { readCommitted, readWithKafkajs } from './helpers/transaction-reader.ts';

const config = { 'transaction.state.log.num.partitions': 3 };
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker({ config });
});
afterAll(() => b?.stop());

async function createTopic(bootstrap: string, topic: string, numPartitions: number) {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions }] });
  await admin.disconnect();
}

async function producer(
  bootstrap: string,
  transactionalId: string,
  options: Partial<TransactionalProducerOptions> = {},
): Promise<TransactionalProducer> {
  const p = new TransactionalProducer(new ClusterClient(bootstrap, { clientId: 'txn-test' }), {
    transactionalId,
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
    await createTopic(b.bootstrap, 'out', 2);
    const p = await producer(b.bootstrap, 'txn-visibility');

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
    await createTopic(b.bootstrap, 'offsets-out', 2);
    await createTopic(b.bootstrap, 'in', 1);
    const p = await producer(b.bootstrap, 'txn-offsets', { maxBlockMs: 5000 });
    const group = { groupId: 'copier' };

    p.beginTransaction();
    await p.send(records('offsets-out', ['x']));
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
    await createTopic(b.bootstrap, 'fenced-out', 2);
    const zombie = await producer(b.bootstrap, 'txn-a');
    zombie.beginTransaction();
    await zombie.send(records('fenced-out', ['zombie-1']));

    const successor = await producer(b.bootstrap, 'txn-a');

    await expect(zombie.send(records('fenced-out', ['zombie-2']))).rejects.toBeInstanceOf(
      ProducerFencedError,
    );
    await expect(zombie.commitTransaction()).rejects.toThrow(
      /transactional producer 'txn-a' is fenced/,
    );
    expect(() => zombie.beginTransaction()).toThrow(ProducerFencedError);

    successor.beginTransaction();
    await successor.send(records('fenced-out', ['end']));
    await successor.commitTransaction();
    const seen = await readCommitted(b.bootstrap, 'fenced-out', 2);
    expect(seen.map((r) => r.value!.toString())).toEqual(['end']);
  });

  it('refuses to send outside a transaction, naming what to call', async () => {
    await createTopic(b.bootstrap, 'outside-out', 2);
    const p = await producer(b.bootstrap, 'txn-outside');
    await expect(p.send(records('outside-out', ['x']))).rejects.toThrow(
      /call beginTransaction\(\) first/,
    );
  });

  it('after a failed send, only an abort is accepted, and the producer goes on', async () => {
    await createTopic(b.bootstrap, 'failed-out', 2);
    const p = await producer(b.bootstrap, 'txn-failed');
    p.beginTransaction();
    const bad: ProducerRecord[] = [{ ...records('failed-out', ['x'])[0]!, partition: 7 }];
    await expect(p.send(bad)).rejects.toBeInstanceOf(TransactionAbortableError);
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(TransactionAbortableError);
    await p.abortTransaction();
    p.beginTransaction();
    await p.send(records('failed-out', ['end']));
    await p.commitTransaction();
    const seen = await readCommitted(b.bootstrap, 'failed-out', 2);
    expect(seen.map((r) => r.value!.toString())).toEqual(['end']);
  });
});

/** One record for each given partition of `topic`, value `<prefix>-<partition>`. */
const onePerPartition = (topic: string, partition: number, prefix: string): ProducerRecord[] => [
  {
    topic,
    partition,
    key: null,
    value: Buffer.from(`${prefix}-${partition}`),
    timestamp: null,
    headers: [],
  },
];

/**
 * Watches the requests every BrokerConnection sends (what the broker is asked), and
 * lets a test answer some of them itself or hold them back until it says so.
 */
function watchRequests(
  intercept: (apiKey: number, send: () => Promise<Message>) => Promise<Message> | undefined = () =>
    undefined,
): Array<{ apiKey: number; body: Message }> {
  const seen: Array<{ apiKey: number; body: Message }> = [];
  const original = BrokerConnection.prototype.request;
  const spy = vi.spyOn(BrokerConnection.prototype, 'request').mockImplementation(function (
    this: BrokerConnection,
    apiKey,
    body,
    opts,
  ) {
    const send = () => {
      seen.push({ apiKey, body });
      return original.call(this, apiKey, body, opts);
    };
    return intercept(apiKey, send) ?? send();
  });
  onTestFinished(() => spy.mockRestore());
  return seen;
}

const addPartitionsRequests = (seen: ReadonlyArray<{ apiKey: number; body: Message }>) =>
  seen
    .filter((r) => r.apiKey === ApiKey.AddPartitionsToTxn)
    .map((r) =>
      (r.body.topics as Array<{ name: string; partitions: number[] }>).flatMap((t) =>
        t.partitions.map((p) => `${t.name}-${p}`),
      ),
    );

describe('transactional producer and its coordinator', () => {
  it('adds the new partitions of concurrent sends in one AddPartitionsToTxn', async () => {
    await createTopic(b.bootstrap, 'coalesced', 4);
    const p = await producer(b.bootstrap, 'txn-coalesced');
    const seen = watchRequests();

    p.beginTransaction();
    await Promise.all([0, 1, 2, 3].map((i) => p.send(onePerPartition('coalesced', i, 'first'))));
    // Partitions already in the transaction are not added again.
    await Promise.all([0, 1, 2, 3].map((i) => p.send(onePerPartition('coalesced', i, 'again'))));
    await p.commitTransaction();

    expect(addPartitionsRequests(seen)).toEqual([
      ['coalesced-0', 'coalesced-1', 'coalesced-2', 'coalesced-3'],
    ]);
    const committed = await readCommitted(b.bootstrap, 'coalesced', 4);
    expect(committed.map((r) => r.value!.toString()).sort()).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`again-${i}`, `first-${i}`]).sort(),
    );
  });

  it('writes sends to partitions in the transaction while an AddPartitionsToTxn is pending', async () => {
    await createTopic(b.bootstrap, 'unblocked', 2);
    const p = await producer(b.bootstrap, 'txn-unblocked');
    p.beginTransaction();
    await p.send(onePerPartition('unblocked', 0, 'early'));

    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen = watchRequests((apiKey, send) =>
      apiKey === ApiKey.AddPartitionsToTxn ? held.then(send) : undefined,
    );
    // Partition 1 is new: its add is held back. Partition 0 is in the transaction.
    const waiting = p.send(onePerPartition('unblocked', 1, 'new'));
    const past = p.send(onePerPartition('unblocked', 0, 'past'));
    const producedWhileHeld = await waitFor(
      'a Produce while the add is held',
      () => seen.find((r) => r.apiKey === ApiKey.Produce),
      10_000,
    );
    expect(addPartitionsRequests(seen)).toEqual([]);
    expect(producedWhileHeld.body.topicData).toMatchObject([
      { name: 'unblocked', partitionData: [{ index: 0 }] },
    ]);
    release();
    await Promise.all([waiting, past]);
    await p.commitTransaction();

    const committed = await readCommitted(b.bootstrap, 'unblocked', 2);
    expect(committed.map((r) => r.value!.toString()).sort()).toEqual([
      'early-0',
      'new-1',
      'past-0',
    ]);
  });

  it.each([
    ['CONCURRENT_TRANSACTIONS', ErrorCode.CONCURRENT_TRANSACTIONS],
    ['COORDINATOR_LOAD_IN_PROGRESS', ErrorCode.COORDINATOR_LOAD_IN_PROGRESS],
    ['NOT_COORDINATOR', ErrorCode.NOT_COORDINATOR],
  ])('retries InitProducerId answered %s', async (name, code) => {
    await createTopic(b.bootstrap, `init-${name}`, 1);
    let refusals = 2;
    const asked: number[] = [];
    watchRequests((apiKey) => {
      if (apiKey === ApiKey.InitProducerId) asked.push(refusals);
      if (apiKey !== ApiKey.InitProducerId || refusals === 0) return undefined;
      refusals--;
      return Promise.resolve({
        throttleTimeMs: 0,
        errorCode: code,
        producerId: -1n,
        producerEpoch: -1,
      });
    });
    const p = await producer(b.bootstrap, `txn-init-${name}`, { retryBackoffMs: 10 });

    // Refused twice, then asked again and answered by the broker.
    expect(asked).toEqual([2, 1, 0]);
    p.beginTransaction();
    await p.send(onePerPartition(`init-${name}`, 0, 'after-retry'));
    await p.commitTransaction();
  });
});
