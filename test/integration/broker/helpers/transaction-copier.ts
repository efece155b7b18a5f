/**
 * A consume-transform-produce application for the exactly-once crash test, run as a
 * child process (`node --import tsx transaction-copier.ts`) and killed with SIGKILL
 * at random points. Built on the project's client: a read_committed GroupConsumer of
 * the input and a TransactionalProducer; each fetched batch of one partition becomes
 * one transaction holding its transformed records and the input offset after them.
 *
 * Restart story: init() fences the killed instance's epoch and aborts what it left
 * open; only then does the consumer join and read the group's offsets (require_stable),
 * so it resumes exactly after the last committed transaction.
 *
 * Environment: BOOTSTRAP, INPUT, OUTPUT, FETCH_BYTES (max.partition.fetch.bytes: the
 * size of a transaction). Prints `committed <partition> <next offset>` after each
 * commit and runs until stopped; the test decides it is done from the group's offsets.
 */
import { ClusterClient } from '../../../../src/protocol/client/cluster-client.ts';
import { GroupConsumer } from '../../../../src/protocol/client/group-consumer.ts';
import { TransactionalProducer } from '../../../../src/protocol/client/transactional-producer.ts';

const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};
const bootstrap = env('BOOTSTRAP');
const input = env('INPUT');
const output = env('OUTPUT');
const fetchBytes = Number(env('FETCH_BYTES'));
const groupId = 'eos-copier';

const producer = new TransactionalProducer(new ClusterClient(bootstrap, { clientId: 'copier' }), {
  transactionalId: 'eos-copier-0',
  transactionTimeoutMs: 10_000,
});
await producer.init();

const quiet = () => {};
const consumer = new GroupConsumer({
  client: new ClusterClient(bootstrap, { clientId: 'copier-consumer' }),
  groupId,
  subscription: { topics: [input], regex: null },
  logger: { debug: quiet, info: quiet, warn: (o, m) => console.error('warn', m ?? '', o) },
  // A killed member holds up the next one's join until its session ends: keep it short
  // (the test broker lowers group.min.session.timeout.ms to allow it).
  sessionTimeoutMs: 1_000,
  heartbeatIntervalMs: 200,
  rebalanceTimeoutMs: 2_000,
  fetchMaxBytes: 4 * 1024 * 1024,
  maxPartitionFetchBytes: fetchBytes,
  fetchMinBytes: 1,
  fetchMaxWaitMs: 100,
  autoOffsetReset: 'earliest',
  readCommitted: true,
  allowAutoTopicCreation: false,
  metadataMaxAgeMs: 5_000,
  retryBackoffMs: 50,
  requestTimeoutMs: 10_000,
});

consumer.start({
  onRevoking: async () => {},
  onAssigned: async () => {},
  onBatch: async (batch) => {
    if (batch.records.length === 0) return;
    producer.beginTransaction();
    await producer.send(
      batch.records.map((r) => ({
        topic: output,
        partition: batch.partition,
        key: r.key,
        value: Buffer.from(`copy:${r.value!.toString()}`),
        timestamp: null,
        headers: [],
      })),
    );
    const next = batch.records[batch.records.length - 1]!.offset + 1;
    await producer.sendOffsetsToTransaction(
      [{ topic: batch.topic, partition: batch.partition, offset: next }],
      { groupId },
    );
    await producer.commitTransaction();
    console.log(`committed ${batch.partition} ${next}`);
  },
  onFatal: (error) => {
    console.error('fatal', error);
    process.exit(2);
  },
});

process.once('SIGTERM', () => {
  void consumer.stop().finally(() => {
    producer.close();
    process.exit(0);
  });
});
