/**
 * ordering=key end to end on the real Redis: the sink task adds the jobs (with their
 * key sets), a KeyOrderedWorker runs them. Each processor call appends to one log, so
 * order is read from the log's sequence, never from clocks.
 */
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type TestRedis, useRedis } from '../../../test/helpers/redis.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { keyOrderSet } from '../key-order.ts';
import { KeyOrderedWorker, parkDelayMs } from '../key-ordered-worker.ts';
import { changeEvent, ORDERS, putWhenConnected, sinkConfig, startTask } from './support.ts';

interface Entry {
  at: 'start' | 'end' | 'fail';
  key: number;
  offset: number;
}

/** The record key (its id) and offset of a job the sink added with job.data=value. */
function recordOf(job: Job): { key: number; offset: number } {
  return {
    key: (job.data as { after: { id: number } }).after.id,
    offset: Number(job.id!.slice(job.id!.lastIndexOf('-') + 1)),
  };
}

/** Worker or KeyOrderedWorker, as the tests construct them. */
type WorkerClass = new (
  name: string,
  processor: (job: Job) => Promise<void>,
  opts: WorkerOptions,
) => Worker;

/** A worker of `kind` on the queue `orders` whose processor logs and then runs `work`. */
function consume(
  redis: TestRedis,
  kind: WorkerClass,
  log: Entry[],
  work: (job: Job) => Promise<void> = async () => {},
  options: Partial<WorkerOptions> = {},
): Worker {
  const worker = new kind(
    'orders',
    async (job: Job) => {
      const r = recordOf(job);
      log.push({ at: 'start', ...r });
      try {
        await work(job);
      } catch (e) {
        log.push({ at: 'fail', ...r });
        throw e;
      }
      log.push({ at: 'end', ...r });
    },
    {
      connection: { ...redis.connection, maxRetriesPerRequest: null },
      prefix: redis.bullPrefix,
      concurrency: 10,
      ...options,
    },
  );
  worker.on('error', () => {});
  onTestFinished(() => worker.close());
  return worker;
}

/**
 * Where a key's jobs did not run one after another in offset order: a start while
 * another job of the key was running, or a job starting before an earlier one ended.
 */
function orderBreaks(log: readonly Entry[]): string[] {
  const breaks: string[] = [];
  const running = new Map<number, number>();
  const lastEnded = new Map<number, number>();
  for (const e of log) {
    if (e.at === 'start') {
      const other = running.get(e.key);
      if (other !== undefined) breaks.push(`key ${e.key}: ${e.offset} started while ${other} ran`);
      const before = lastEnded.get(e.key) ?? -1;
      if (e.offset < before) breaks.push(`key ${e.key}: ${e.offset} started after ${before}`);
      running.set(e.key, e.offset);
    } else {
      running.delete(e.key);
      if (e.at === 'end') lastEnded.set(e.key, Math.max(lastEnded.get(e.key) ?? -1, e.offset));
    }
  }
  return breaks;
}

/** The offsets of each key in the order their jobs ended. */
function endOrder(log: readonly Entry[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const e of log) if (e.at === 'end') out.set(e.key, [...(out.get(e.key) ?? []), e.offset]);
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 4 keys x 8 records, interleaved: offset o belongs to key o % 4. */
const KEYS = 4;
const PER_KEY = 8;
const interleaved = () =>
  Array.from({ length: KEYS * PER_KEY }, (_, o) => changeEvent(o, o % KEYS, 'c'));

/**
 * Random processing times, longer for a key's earlier jobs: jobs of one key that run
 * side by side then finish out of order, so an unordered consumer shows it.
 */
const randomWork = async (job: Job) => {
  const { offset } = recordOf(job);
  await sleep(Math.random() * 10 + (PER_KEY - Math.floor(offset / KEYS)) * 4);
};

async function allEnded(log: Entry[], n: number): Promise<void> {
  await waitFor(`${n} jobs ended`, () =>
    log.filter((e) => e.at === 'end').length >= n ? true : undefined,
  );
}

describe('ordering=key', () => {
  it('jobs of one key complete in record order under concurrency 10', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { ordering: 'key' }));
    await putWhenConnected(task, interleaved());
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log, randomWork);
    await allEnded(log, KEYS * PER_KEY);
    expect(orderBreaks(log)).toEqual([]);
    const expected = new Map(
      Array.from({ length: KEYS }, (_, k) => [
        k,
        Array.from({ length: PER_KEY }, (_, i) => k + i * KEYS),
      ]),
    );
    expect(endOrder(log)).toEqual(expected);
    // Every key is released in the end (just after BullMQ completes its last job): its
    // set goes with its last member.
    const sets = Array.from({ length: KEYS }, (_, k) =>
      keyOrderSet(redis.bullPrefix, 'orders', { topic: ORDERS, partition: 0 }, String(k)),
    );
    await waitFor('every key released', async () =>
      (await redis.client.exists(...sets)) === 0 ? true : undefined,
    );
  });

  it('a plain Worker with concurrency 10 breaks that order in the same set-up', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { ordering: 'key' }));
    await putWhenConnected(task, interleaved());
    const log: Entry[] = [];
    consume(redis, Worker, log, randomWork);
    await allEnded(log, KEYS * PER_KEY);
    expect(orderBreaks(log).length).toBeGreaterThan(0);
  });

  it('one busy key: its 30 jobs run one at a time in record order under concurrency 10', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { ordering: 'key' }));
    await putWhenConnected(
      task,
      Array.from({ length: 30 }, (_, o) => changeEvent(o, 1, 'c')),
    );
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log, async () => {
      await sleep(Math.random() * 5);
    });
    await allEnded(log, 30);
    expect(orderBreaks(log)).toEqual([]);
    expect(endOrder(log).get(1)).toEqual(Array.from({ length: 30 }, (_, o) => o));
  });

  it('the sink puts each job in its key set, scored by offset, once across a replay', async () => {
    const redis = await useRedis();
    const config = sinkConfig(redis, { ordering: 'key' });
    const first = await startTask(config);
    await putWhenConnected(first, [changeEvent(0, 7, 'c'), changeEvent(1, 8, 'c')]);
    await first.stop();
    const second = await startTask(config);
    await putWhenConnected(second, [
      changeEvent(0, 7, 'c'),
      changeEvent(1, 8, 'c'),
      changeEvent(2, 7, 'u'),
    ]);
    const set = keyOrderSet(redis.bullPrefix, 'orders', { topic: ORDERS, partition: 0 }, '7');
    expect(await redis.client.zrange(set, '0', '-1', 'WITHSCORES')).toEqual([
      `${ORDERS}-0-0`,
      '0',
      `${ORDERS}-0-2`,
      '2',
    ]);
    expect(
      await redis.client.hget(`${redis.bullPrefix}:orders:${ORDERS}-0-2`, 'connectKeyOrder'),
    ).toBe(set);
  });

  it('a job that fails once and is retried still holds its key', async () => {
    const redis = await useRedis();
    const task = await startTask(
      sinkConfig(redis, {
        ordering: 'key',
        'job.attempts': '2',
        'job.backoff.type': 'fixed',
        'job.backoff.delay': '300',
      }),
    );
    await putWhenConnected(
      task,
      [0, 1, 2].map((o) => changeEvent(o, 1, 'c')),
    );
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log, async (job) => {
      if (recordOf(job).offset === 0 && job.attemptsMade === 0) throw new Error('first try');
    });
    await allEnded(log, 3);
    expect(log.map((e) => `${e.at} ${e.offset}`)).toEqual([
      'start 0',
      'fail 0',
      'start 0',
      'end 0',
      'start 1',
      'end 1',
      'start 2',
      'end 2',
    ]);
  });

  it('a job that fails for good releases its key', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { ordering: 'key' }));
    await putWhenConnected(
      task,
      [0, 1].map((o) => changeEvent(o, 1, 'c')),
    );
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log, async (job) => {
      if (recordOf(job).offset === 0) throw new Error('poison');
    });
    await allEnded(log, 1);
    expect(log.map((e) => `${e.at} ${e.offset}`)).toEqual([
      'start 0',
      'fail 0',
      'start 1',
      'end 1',
    ]);
  });

  it('a removed job, or one a plain Worker completed, does not block its key', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { ordering: 'key' }));
    // Key 1's head completes under a plain Worker, which releases nothing.
    await putWhenConnected(task, [changeEvent(0, 1, 'c')]);
    const plainLog: Entry[] = [];
    const plain = consume(redis, Worker, plainLog);
    await allEnded(plainLog, 1);
    await plain.close();
    // Key 2's head is removed while it waits.
    await task.put([changeEvent(1, 2, 'c'), changeEvent(2, 1, 'c'), changeEvent(3, 2, 'c')]);
    const q = new Queue('orders', { connection: redis.connection, prefix: redis.bullPrefix });
    onTestFinished(() => q.close());
    await q.remove(`${ORDERS}-0-1`);
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log);
    await allEnded(log, 2);
    expect(endOrder(log)).toEqual(
      new Map([
        [1, [2]],
        [2, [3]],
      ]),
    );
  });

  it('releasing a key does not cut short the job.delay.ms of its next job', async () => {
    const redis = await useRedis();
    const task = await startTask(
      sinkConfig(redis, { ordering: 'key', 'job.delay.ms': '${value.after.delay}' }),
    );
    await putWhenConnected(task, [
      changeEvent(0, 1, 'c', { delay: 0 }),
      changeEvent(1, 1, 'c', { delay: 3_600_000 }),
    ]);
    const log: Entry[] = [];
    consume(redis, KeyOrderedWorker, log);
    await allEnded(log, 1);
    const set = keyOrderSet(redis.bullPrefix, 'orders', { topic: ORDERS, partition: 0 }, '1');
    await waitFor('the key released', async () =>
      (await redis.client.zscore(set, `${ORDERS}-0-0`)) === null ? true : undefined,
    );
    const q = new Queue('orders', { connection: redis.connection, prefix: redis.bullPrefix });
    onTestFinished(() => q.close());
    expect(await q.getJobState(`${ORDERS}-0-1`)).toBe('delayed');
  });

  it('parks a waiting job 100 ms doubling up to 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map(parkDelayMs)).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
  });

  it('refuses options and connections it cannot keep the order with', async () => {
    const redis = await useRedis();
    const connection = { ...redis.connection, maxRetriesPerRequest: null };
    expect(
      () => new KeyOrderedWorker('orders', async () => {}, { connection, maxStartedAttempts: 3 }),
    ).toThrow(/^KeyOrderedWorker refuses maxStartedAttempts/);
    const cluster = new Cluster([{ host: redis.connection.host, port: redis.connection.port }], {
      lazyConnect: true,
    });
    onTestFinished(() => cluster.disconnect());
    expect(
      () => new KeyOrderedWorker('orders', async () => {}, { connection: cluster as never }),
    ).toThrow(/^KeyOrderedWorker does not support Redis Cluster/);
  });
});
