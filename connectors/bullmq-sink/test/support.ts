/**
 * Test support for the BullMQ sink: a runner-side task context that records what the
 * task asks for, Debezium change events as the Postgres CDC connector writes them
 * (after the JsonConverter: structs as plain objects), and a BullMQ Worker that
 * records every job it runs. Redis is real (test/helpers/redis.ts gives each test its
 * own key prefix); everything started here is closed when the test ends.
 */
import { type Job, Worker } from 'bullmq';
import { onTestFinished } from 'vitest';
import {
  ManualClock,
  noopPluginMetrics,
  type SinkRecord,
  type SinkTaskContext,
  type TopicPartition,
} from '../../../src/connect/api/index.ts';
import type { TestRedis } from '../../../test/helpers/redis.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { BullMQSinkTask } from '../bullmq-sink-task.ts';

export const ORDERS = 'shop.public.orders';

export interface RecordingContext extends SinkTaskContext {
  clock: ManualClock;
  troubles: Array<string | null>;
  timeouts: number[];
  errant: Array<{ record: SinkRecord; error: Error }>;
}

export function taskContext(
  options: { tolerate?: boolean; connector?: string; partitions?: TopicPartition[] } = {},
): RecordingContext {
  const troubles: Array<string | null> = [];
  const timeouts: number[] = [];
  const errant: Array<{ record: SinkRecord; error: Error }> = [];
  const partitions = options.partitions ?? [{ topic: ORDERS, partition: 0 }];
  return {
    connectorName: options.connector ?? 'jobs',
    taskId: 0,
    clock: new ManualClock(1_700_000_000_000),
    troubles,
    timeouts,
    errant,
    assignment: () => partitions,
    pause: () => undefined,
    resume: () => undefined,
    requestCommit: () => undefined,
    offset: () => undefined,
    timeout: (ms) => timeouts.push(ms),
    reportTrouble: (d) => troubles.push(d),
    pluginMetrics: () => noopPluginMetrics,
    ...(options.tolerate
      ? {
          errantRecordReporter: async (record: SinkRecord, error: Error) => {
            errant.push({ record, error });
          },
        }
      : {}),
  };
}

/** A started task, stopped at the end of the test. */
export async function startTask(
  config: Record<string, string>,
  context: SinkTaskContext = taskContext(),
): Promise<BullMQSinkTask> {
  const task = new BullMQSinkTask();
  onTestFinished(() => task.stop());
  task.start(config, context);
  return task;
}

/** The sink config of a test: its own prefix on the test Redis. */
export function sinkConfig(
  redis: TestRedis,
  extra: Record<string, string> = {},
): Record<string, string> {
  const c = redis.connection;
  return {
    'redis.host': c.host,
    'redis.port': String(c.port),
    'redis.db': String(c.db),
    'queue.prefix': redis.bullPrefix,
    'queue.name': 'orders',
    ...extra,
  };
}

export type Op = 'c' | 'u' | 'd' | 'r';

/** A Debezium change event of shop.public.orders, as a SinkRecord. */
export function changeEvent(
  offset: number,
  id: number,
  op: Op,
  row: Record<string, unknown> = {},
  partition = 0,
): SinkRecord {
  const image = { id, status: 'new', amount: 10, ...row };
  return {
    topic: ORDERS,
    kafkaPartition: partition,
    kafkaOffset: offset,
    timestampType: 'CreateTime',
    timestamp: 1_700_000_000_000 + offset,
    keySchema: null,
    key: { id },
    valueSchema: null,
    value: {
      before: op === 'u' || op === 'd' ? { ...image, status: 'old' } : null,
      after: op === 'd' ? null : image,
      source: {
        connector: 'postgresql',
        name: 'shop',
        db: 'shop',
        schema: 'public',
        table: 'orders',
        lsn: 1000 + offset,
      },
      op,
      ts_ms: 1_700_000_000_000 + offset,
    },
  };
}

export function tombstone(offset: number, id: number): SinkRecord {
  return { ...changeEvent(offset, id, 'd'), value: null };
}

/** Inserts of ids from..from+n-1 at offsets from..from+n-1. */
export function inserts(from: number, n: number, partition = 0): SinkRecord[] {
  return Array.from({ length: n }, (_, i) => changeEvent(from + i, from + i, 'c', {}, partition));
}

export interface JobRecorder {
  /** Every job run, in run order. */
  runs: Array<{ id: string; name: string; data: unknown; opts: Job['opts'] }>;
  close(): Promise<void>;
}

/** A BullMQ Worker on `queue` that records each job it runs (and completes it). */
export function recordJobs(redis: TestRedis, queue: string, concurrency = 1): JobRecorder {
  const runs: JobRecorder['runs'] = [];
  const worker = new Worker(
    queue,
    async (job) => {
      runs.push({ id: job.id!, name: job.name, data: job.data, opts: job.opts });
    },
    {
      connection: { ...redis.connection, maxRetriesPerRequest: null },
      prefix: redis.bullPrefix,
      concurrency,
    },
  );
  worker.on('error', () => {});
  const close = () => worker.close();
  onTestFinished(close);
  return { runs, close };
}

/**
 * put, retried until the task's connection (opened in the background at start) is up;
 * the runner does the same with each RetriableException.
 */
export async function putWhenConnected(
  task: BullMQSinkTask,
  records: readonly SinkRecord[],
): Promise<void> {
  await waitFor('the task to reach Redis', async () => {
    await task.put(records);
    return true;
  });
}
