/**
 * WorkerSourceTask exactly-once (KIP-618), on a real broker in this process, with a
 * transactional producer and transaction.boundary=poll:
 *   - the next batch is polled while the previous transaction commits, yet each
 *     transaction holds exactly the records of its poll (the log's data batches
 *     between consecutive COMMIT markers), its offsets record covers them, and
 *     commitRecord follows each commit;
 *   - task.commit() runs at most once per offset.flush.interval.ms: after the first
 *     transaction, then the rest share the call made at stop;
 *   - transaction-size-avg/min/max (KIP-618's source-task-metrics) count each
 *     committed transaction's records, those converted ahead in the next one.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { SourceRecord } from '../../../../src/connect/api/connect-record.ts';
import type { SourceTaskContext } from '../../../../src/connect/api/source-task.ts';
import { errorHandlingConfig } from '../../../../src/connect/errors/error-handling-config.ts';
import { RetryWithToleranceOperator } from '../../../../src/connect/errors/retry-with-tolerance-operator.ts';
import { ConnectMetrics, metricName } from '../../../../src/connect/metrics/connect-metrics.ts';
import { ConnectorOffsetReader } from '../../../../src/connect/runtime/connector-offset-reader.ts';
import { producerSettings } from '../../../../src/connect/runtime/kafka-clients.ts';
import { OffsetStorageWriter } from '../../../../src/connect/runtime/offset-storage-writer.ts';
import { createRecordConverters } from '../../../../src/connect/runtime/record-converters.ts';
import { KafkaTransactionalSourceProducer } from '../../../../src/connect/runtime/source-producer.ts';
import { TransactionBoundaries } from '../../../../src/connect/runtime/source-transactions.ts';
import { TopicCreation } from '../../../../src/connect/runtime/topic-creation.ts';
import { TransformationChain } from '../../../../src/connect/runtime/transformation-chain.ts';
import { WorkerSourceTask } from '../../../../src/connect/runtime/worker-source-task.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import {
  decodeRecords,
  iterateBatches,
  readBatchHeader,
} from '../../../../src/protocol/record-batch.ts';
import { systemClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { systemTimers } from '../../../../src/util/timers.ts';
import { kafka } from '../../../conformance/helpers/kafkajs.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fetchPartition, type RawClient, useRawBroker } from '../../broker/server/raw-client.ts';
import { createTopic } from '../../broker/txn/txn-client.ts';
import { parsePrometheusText, sampleOf } from '../../metrics/prometheus-text.ts';
import { testRegistry } from '../worker/plugin-fixtures.ts';

const { broker, client } = useRawBroker({
  config: { 'transaction.state.log.num.partitions': 1 },
});

const BATCHES = 5;
/** More than the runner converts in one slice while a commit is in flight (128). */
const PER_BATCH = 200;
const READ_UNCOMMITTED = 0;

/** What the test task saw and was told. */
interface Seen {
  /** Per poll that returned records: how many commitRecord calls had come before it. */
  committedAtPoll: number[];
  commitRecords: number[];
  commits: number;
}

/** The records of each poll: BATCHES polls of PER_BATCH unless a test says otherwise. */
const EVEN = Array.from({ length: BATCHES }, () => PER_BATCH);

/** How a run goes: its polls' sizes, and (connector boundaries) how each poll's transaction ends. */
interface Run {
  sizes?: readonly number[];
  ends?: ReadonlyArray<'commit' | 'abort'>;
  metrics?: ConnectMetrics;
}

function sourceTask(topic: string, seen: Seen, sizes: readonly number[], run: Run) {
  let polls = 0;
  let from = 0;
  let context: SourceTaskContext | undefined;
  return {
    version: () => '1',
    start(_config: unknown, ctx: SourceTaskContext) {
      context = ctx;
    },
    async poll(): Promise<SourceRecord[] | null> {
      // Asked during the poll: the batch it returns ends the transaction.
      const end = run.ends?.[polls];
      if (end === 'commit') context?.transactionContext?.commitTransaction();
      if (end === 'abort') context?.transactionContext?.abortTransaction();
      const size = sizes[polls];
      if (size === undefined) {
        await new Promise((r) => setTimeout(r, 10));
        return null;
      }
      polls++;
      const start = from;
      from += size;
      seen.committedAtPoll.push(seen.commitRecords.length);
      return Array.from({ length: size }, (_, i) => ({
        topic,
        value: `v${start + i}`,
        sourcePartition: { stream: 'only' },
        sourceOffset: { seq: start + i },
      }));
    },
    commitRecord(record: SourceRecord) {
      seen.commitRecords.push((record.sourceOffset as { seq: number }).seq);
    },
    commit() {
      seen.commits++;
    },
    stop() {},
  };
}

/** The partition's batches in order: data values, and `|` for each COMMIT marker. */
async function layout(c: RawClient, topic: string): Promise<string[]> {
  const answer = await fetchPartition(c, topic, 0, 0, { isolationLevel: READ_UNCOMMITTED });
  const records = (answer.responses as Message[])[0]!.partitions[0].records as Buffer;
  const out: string[] = [];
  for (const { position } of iterateBatches(records)) {
    const header = readBatchHeader(records, position);
    for (const r of decodeRecords(records, position)) {
      if (!header.control) out.push(String(r.value));
      // A control record's key: version (int16), type (int16, 1 = COMMIT).
      else out.push(r.key?.readInt16BE(2) === 1 ? '|' : 'ABORT');
    }
  }
  return out;
}

/**
 * Runs the test task to the end of its batches and stops it; what it saw, and the
 * data and offsets partitions as layout() shows them.
 */
async function runToEnd(
  name: string,
  run: Run = {},
): Promise<{
  seen: Seen;
  commitsBeforeStop: number;
  data: string[];
  offsets: string[];
}> {
  const c = await client();
  const topic = `${name}-data`;
  const offsetsTopic = `${name}-offsets`;
  // The data topic is made by the task's topic creation, which waits on the admin
  // client before the first records go to the producer.
  await createTopic(c, offsetsTopic);
  const admin = kafka(`127.0.0.1:${broker().port}`).admin();
  await admin.connect();
  onTestFinished(() => admin.disconnect());
  const seen: Seen = { committedAtPoll: [], commitRecords: [], commits: 0 };
  const sizes = run.sizes ?? EVEN;
  const { metrics } = run;
  const logger = getLogger('test');
  const plugins = testRegistry();
  const settings = producerSettings({});
  const producer = new KafkaTransactionalSourceProducer(
    [`127.0.0.1:${broker().port}`],
    `${name}-producer`,
    settings,
    logger,
    `${name}-0`,
  );
  const store = new MemoryOffsetBackingStore();
  const id = { connector: name, task: 0 };
  const runner = new WorkerSourceTask({
    id,
    task: sourceTask(topic, seen, sizes, run),
    taskClass: 'test.PipelinedSource',
    taskConfig: {},
    targetState: 'RUNNING',
    converters: createRecordConverters(
      plugins,
      {
        'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
      },
      {},
    ),
    transforms: TransformationChain.fromConfig(plugins, {}),
    operator: new RetryWithToleranceOperator(errorHandlingConfig({}), [], {
      now: () => Date.now(),
      sleep: async () => true,
    }),
    status: { connectorState() {}, taskState() {} },
    clock: systemClock,
    timers: systemTimers,
    logger,
    // Longer than the test: every task.commit() after the first waits for the stop.
    offsetFlushIntervalMs: 600_000,
    gracefulShutdownMs: 5000,
    producer,
    offsetReader: new ConnectorOffsetReader(id.connector, store),
    offsetWriter: new OffsetStorageWriter(id.connector, store),
    topicCreation: TopicCreation.fromConfig(true, {
      'topic.creation.default.replication.factor': '1',
      'topic.creation.default.partitions': '1',
    }),
    admin,
    offsetFlushTimeoutMs: 5000,
    bufferMemory: settings.bufferMemory,
    maxRequestBytes: settings.maxRequestBytes,
    ...(metrics !== undefined ? { metrics: metrics.addTask(id, 'source') } : {}),
    exactlyOnce: {
      producer,
      transactionalId: `${name}-0`,
      boundaries: new TransactionBoundaries(
        run.ends !== undefined ? 'connector' : 'poll',
        600_000,
        Date.now(),
      ),
      offsetsTopic,
      beforeProducerInit: async () => {},
      afterProducerInit: async () => {},
    },
  });
  onTestFinished(() => runner.stop());
  await runner.start();
  await waitFor('every record committed, or a failure', () =>
    seen.commitRecords.length === sizes.reduce((a, b) => a + b, 0) || runner.isFailed
      ? true
      : undefined,
  );
  expect(runner.isFailed).toBe(false);
  const commitsBeforeStop = seen.commits;
  await runner.stop();
  expect(runner.isFailed).toBe(false);
  return {
    seen,
    commitsBeforeStop,
    data: await layout(c, topic),
    offsets: await layout(c, offsetsTopic),
  };
}

describe('WorkerSourceTask exactly-once', () => {
  it('polls the next batch while a transaction commits, yet keeps each poll in its own transaction with its offsets', async () => {
    const { seen, data, offsets } = await runToEnd('eos-pipelined');
    // Every transaction holds exactly its poll's records...
    const expected: string[] = [];
    for (let b = 0; b < BATCHES; b++) {
      for (let i = 0; i < PER_BATCH; i++) expected.push(`v${b * PER_BATCH + i}`);
      expected.push('|');
    }
    expect(data).toEqual(expected);
    // ...and an offsets record for its last one, committed with it.
    expect(offsets).toEqual(
      Array.from({ length: BATCHES }, (_, b) => [
        `{"seq":${b * PER_BATCH + PER_BATCH - 1}}`,
        '|',
      ]).flat(),
    );
    // Yet each poll after the first came before the previous transaction's commitRecord
    // calls: it ran while that transaction was committing.
    expect(seen.committedAtPoll).toEqual([0, 0, 1, 2, 3].map((b) => b * PER_BATCH));
    expect(seen.commitRecords).toEqual(Array.from({ length: BATCHES * PER_BATCH }, (_, i) => i));
  });

  it('calls task.commit() at most once per offset.flush.interval.ms, and once more at stop', async () => {
    const { seen, commitsBeforeStop } = await runToEnd('eos-task-commit');
    // After the first transaction; the four later ones wait for the interval...
    expect(commitsBeforeStop).toBe(1);
    // ...and the stop makes the call it held back.
    expect(seen.commits).toBe(2);
  });

  it('shows the records of each committed transaction as transaction-size-avg, -min and -max', async () => {
    const metrics = new ConnectMetrics({ processMetrics: false });
    // Each poll after the first is converted while the previous transaction commits:
    // its records count in its own transaction, not in the one committing.
    const sizes = [200, 130, 170, 150];
    await runToEnd('eos-transaction-size', { sizes, metrics });
    const f = parsePrometheusText(await metrics.scrape());
    const labels = { connector: 'eos-transaction-size', task: '0' };
    const size = (a: string) => sampleOf(f, metricName('source-task-metrics', a), labels);
    expect(size('transaction-size-min')).toBe(130);
    expect(size('transaction-size-max')).toBe(200);
    expect(size('transaction-size-avg')).toBe(162.5);
  });

  it('drops an aborted transaction: its records are never committed, its offsets are, and it counts no records', async () => {
    const metrics = new ConnectMetrics({ processMetrics: false });
    // The task asks, during each poll, to end the transaction after that poll's batch.
    const { seen, data, offsets } = await runToEnd('eos-connector-abort', {
      sizes: [3, 2, 4],
      ends: ['commit', 'abort', 'commit'],
      metrics,
    });
    expect(data).toEqual(['v0', 'v1', 'v2', '|', 'v3', 'v4', 'ABORT', 'v5', 'v6', 'v7', 'v8', '|']);
    // The aborted records' offset still committed, in a transaction of its own.
    expect(offsets).toEqual(['{"seq":2}', '|', '{"seq":4}', '|', '{"seq":8}', '|']);
    expect(seen.commitRecords).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const f = parsePrometheusText(await metrics.scrape());
    const labels = { connector: 'eos-connector-abort', task: '0' };
    const size = (a: string) => sampleOf(f, metricName('source-task-metrics', a), labels);
    expect([size('transaction-size-min'), size('transaction-size-max')]).toEqual([0, 4]);
    expect(size('transaction-size-avg')).toBeCloseTo(7 / 3);
  });
});
