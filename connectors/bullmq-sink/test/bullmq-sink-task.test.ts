import { Queue, Worker } from 'bullmq';
import { describe, expect, it, onTestFinished } from 'vitest';
import { useRedis } from '../../../test/helpers/redis.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import {
  changeEvent,
  inserts,
  ORDERS,
  putWhenConnected,
  recordJobs,
  sinkConfig,
  startTask,
  taskContext,
  tombstone,
} from './support.ts';

const tp0 = { topic: ORDERS, partition: 0 };

function useQueue(redis: Awaited<ReturnType<typeof useRedis>>, name: string): Queue {
  const q = new Queue(name, { connection: redis.connection, prefix: redis.bullPrefix });
  return q;
}

describe('BullMQSinkTask', () => {
  it('turns change events into jobs a BullMQ Worker runs, with the configured name, data and options', async () => {
    const redis = await useRedis();
    const task = await startTask(
      sinkConfig(redis, {
        'queue.name': 'cdc-${table}',
        'job.name': '${value.op}',
        'job.data': 'after',
        'job.attempts': '3',
        'job.backoff.type': 'exponential',
        'job.backoff.delay': '500',
        'job.remove.on.complete': '100',
        'job.remove.on.fail': '7d',
      }),
    );
    await putWhenConnected(task, inserts(0, 1));
    await task.put([changeEvent(1, 7, 'u', { status: 'paid' }), changeEvent(2, 8, 'd')]);
    const worker = recordJobs(redis, 'cdc-orders');
    await waitFor('3 jobs run', () => (worker.runs.length === 3 ? true : undefined));
    expect(worker.runs.map((r) => [r.id, r.name, r.data])).toEqual([
      [`${ORDERS}-0-0`, 'c', { id: 0, status: 'new', amount: 10 }],
      [`${ORDERS}-0-1`, 'u', { id: 7, status: 'paid', amount: 10 }],
      // A delete's job carries the before image.
      [`${ORDERS}-0-2`, 'd', { id: 8, status: 'old', amount: 10 }],
    ]);
    expect(worker.runs[0]!.opts).toMatchObject({
      attempts: 3,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: 100,
      removeOnFail: { age: 7 * 86400 },
    });
    expect(task.preCommit([{ ...tp0, offset: 3 }])).toEqual([{ ...tp0, offset: 3 }]);
  });

  it('replays of records whose jobs completed and were removed add no job again, in a new task instance', async () => {
    const redis = await useRedis();
    const config = sinkConfig(redis, { 'job.remove.on.complete': 'true' });
    const worker = recordJobs(redis, 'orders');
    const first = await startTask(config);
    await putWhenConnected(first, inserts(0, 100));
    await waitFor('100 jobs run', () => (worker.runs.length === 100 ? true : undefined));
    // The crash: nothing was committed to Kafka, so the next task gets all again.
    await first.stop();
    const second = await startTask(config);
    await putWhenConnected(second, inserts(0, 150));
    await waitFor('150 jobs run', () => (worker.runs.length >= 150 ? true : undefined));
    const q = useQueue(redis, 'orders');
    await waitFor('queue drained', async () => ((await q.count()) === 0 ? true : undefined));
    await q.close();
    const ids = worker.runs.map((r) => r.id);
    expect(new Set(ids).size).toBe(150);
    expect(ids.length).toBe(150);
    expect(second.preCommit([{ ...tp0, offset: 150 }])).toEqual([{ ...tp0, offset: 150 }]);
  });

  it('with job.id=key a newer change of a row replaces its waiting job, and a tombstone deletes it', async () => {
    const redis = await useRedis();
    const task = await startTask(
      sinkConfig(redis, {
        'job.id': 'key',
        'job.data': 'after',
        'behavior.on.null.values': 'delete',
      }),
    );
    await putWhenConnected(task, [changeEvent(0, 1, 'c')]);
    await task.put([
      changeEvent(1, 1, 'u', { status: 'paid' }),
      changeEvent(2, 2, 'c'),
      changeEvent(3, 3, 'c'),
      tombstone(4, 3),
    ]);
    const q = useQueue(redis, 'orders');
    const waiting = await q.getJobs(['waiting']);
    await q.close();
    expect(waiting.map((j) => [j.id, j.data.status]).sort()).toEqual([
      [`${ORDERS}/1`, 'paid'],
      [`${ORDERS}/2`, 'new'],
    ]);
  });

  it('sends records it cannot map to the errant record reporter and adds the others', async () => {
    const redis = await useRedis();
    const context = taskContext({ tolerate: true });
    const task = await startTask(
      sinkConfig(redis, { 'job.data': 'after.id,after.customer' }),
      context,
    );
    const good = changeEvent(0, 1, 'c', { customer: 'ada' });
    const bad = changeEvent(1, 2, 'c');
    await putWhenConnected(task, [good, bad]);
    expect(context.errant.map((e) => [e.record.kafkaOffset, e.error.message])).toEqual([
      [1, `record ${ORDERS}-0@1: job.data field after.customer is missing`],
    ]);
    const q = useQueue(redis, 'orders');
    expect((await q.getJobs(['waiting'])).map((j) => j.data)).toEqual([{ id: 1, customer: 'ada' }]);
    await q.close();
    // The reported record is covered too: Kafka may move past it.
    expect(task.preCommit([{ ...tp0, offset: 2 }])).toEqual([{ ...tp0, offset: 2 }]);
  });

  it('fails on a record it cannot map when errors are not tolerated, adding nothing of the batch', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { 'job.name': '${value.kind}' }));
    await waitFor('Redis connection', async () => {
      await expect(task.put(inserts(0, 3))).rejects.toThrow(
        `record ${ORDERS}-0@0: '\${value.kind}' needs value.kind, which is missing`,
      );
      return true;
    });
    const q = useQueue(redis, 'orders');
    expect(await q.count()).toBe(0);
    await q.close();
    expect(task.preCommit([{ ...tp0, offset: 3 }])).toEqual([]);
  });

  it('a second writer of the same partition loses the race and adds none of the records the first covered', async () => {
    const redis = await useRedis();
    const config = sinkConfig(redis);
    const a = await startTask(config);
    const b = await startTask(config);
    await putWhenConnected(a, inserts(0, 10));
    await putWhenConnected(b, inserts(0, 5));
    // b read a's position on its first put: nothing below it is added again.
    await a.put(inserts(10, 10));
    // b's guard saw a's position at 10; a moved it to 20, so b's EXEC is refused and
    // b re-reads before writing.
    await b.put(inserts(10, 15));
    const q = useQueue(redis, 'orders');
    const ids = (await q.getJobs(['waiting'])).map((j) => j.id);
    await q.close();
    expect(ids.length).toBe(25);
    expect(new Set(ids).size).toBe(25);
    expect(b.stats?.conflicts).toBe(1);
  });

  it('adds one batch per transaction with no extra round trip once its guard is armed', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { 'batch.size': '100' }));
    await putWhenConnected(task, inserts(0, 1));
    for (let i = 0; i < 5; i++) await task.put(inserts(1 + i * 250, 250));
    expect(task.stats).toEqual({ transactions: 1 + 15, guardReads: 1, conflicts: 0, followUps: 0 });
  });

  it('with job.id=key a change of a row whose job is active still gets a job of its own', async () => {
    const redis = await useRedis();
    const task = await startTask(sinkConfig(redis, { 'job.id': 'key', 'job.data': 'after' }));
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const runs: Array<[string, string]> = [];
    const worker = new Worker(
      'orders',
      async (job) => {
        runs.push([job.id!, job.data.status]);
        if (job.data.status === 'new') await held;
      },
      { connection: { ...redis.connection, maxRetriesPerRequest: null }, prefix: redis.bullPrefix },
    );
    worker.on('error', () => {});
    onTestFinished(() => worker.close());
    await putWhenConnected(task, [changeEvent(0, 1, 'c')]);
    await waitFor('the first job active', () => (runs.length === 1 ? true : undefined));
    await task.put([changeEvent(1, 1, 'u', { status: 'paid' })]);
    release();
    await waitFor('both changes run', () => (runs.length === 2 ? true : undefined));
    expect(runs).toEqual([
      [`${ORDERS}/1`, 'new'],
      [`${ORDERS}/1~${ORDERS}-0-1`, 'paid'],
    ]);
    expect(task.stats?.followUps).toBe(1);
  });
});
