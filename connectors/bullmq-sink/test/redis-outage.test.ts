import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test/helpers/ports.ts';
import { useTmpDir } from '../../../test/helpers/tmp-dir.ts';
import { usePrivateRedis } from './private-redis.ts';
import { inserts, ORDERS, putWhenConnected, startTask, taskContext } from './support.ts';

const tp0 = { topic: ORDERS, partition: 0 };

describe('BullMQSinkTask when Redis goes away', () => {
  it('retries with back-off while RUNNING with the outage in its trace, then resumes with no record lost or doubled', async () => {
    const port = await freePort();
    const redis = await usePrivateRedis(useTmpDir('bullmq-redis-'), port);
    const context = taskContext();
    const config = {
      'redis.url': `redis://127.0.0.1:${port}`,
      'queue.name': 'orders',
      'errors.retry.timeout': '-1',
      'errors.retry.delay.max.ms': '1000',
    };
    const task = await startTask(config, context);
    await putWhenConnected(task, inserts(0, 100));
    await redis.kill();
    const before = context.timeouts.length;
    // The runner redelivers the same batch after each RetriableException.
    const batch = inserts(100, 100);
    for (let i = 0; i < 3; i++) {
      await expect(task.put(batch)).rejects.toMatchObject({ kind: 'retriable' });
      context.clock.advance(1000);
    }
    expect(context.timeouts.slice(before)).toEqual([300, 600, 1000]);
    expect(context.troubles.at(-1)).toMatch(
      new RegExp(
        `^Redis at redis://127\\.0\\.0\\.1:${port}/0 unavailable since .* \\(attempt 3\\): .*; retrying in 1000 ms$`,
      ),
    );
    expect(task.preCommit([{ ...tp0, offset: 200 }])).toEqual([{ ...tp0, offset: 100 }]);
    await redis.restart();
    await putWhenConnected(task, batch);
    expect(context.troubles.at(-1)).toBeNull();
    // A replay from Kafka's committed offset adds nothing twice.
    await task.put(inserts(0, 200));
    const q = new Queue('orders', { connection: { host: '127.0.0.1', port } });
    const ids = (await q.getJobs(['waiting'])).map((j) => j.id);
    await q.close();
    expect(ids.length).toBe(200);
    expect(new Set(ids).size).toBe(200);
    expect(task.preCommit([{ ...tp0, offset: 200 }])).toEqual([{ ...tp0, offset: 200 }]);
  });

  it('fails the task once Redis has been failing for errors.retry.timeout', async () => {
    const port = await freePort();
    const context = taskContext();
    const task = await startTask(
      {
        'redis.url': `redis://127.0.0.1:${port}`,
        'queue.name': 'orders',
        'errors.retry.timeout': '5000',
      },
      context,
    );
    await expect(task.put(inserts(0, 1))).rejects.toMatchObject({ kind: 'retriable' });
    context.clock.advance(4999);
    await expect(task.put(inserts(0, 1))).rejects.toMatchObject({ kind: 'retriable' });
    expect(context.timeouts).toEqual([300, 1]);
    context.clock.advance(1);
    await expect(task.put(inserts(0, 1))).rejects.toThrow(
      new RegExp(
        `^Redis at redis://127\\.0\\.0\\.1:${port}/0 failing for 5000 ms \\(3 attempts\\), beyond errors\\.retry\\.timeout=5000: `,
      ),
    );
    await expect(task.put(inserts(0, 1))).rejects.toMatchObject({ kind: 'connect' });
  });

  it('fails at the first Redis failure with errors.retry.timeout=0, the runtime default', async () => {
    const port = await freePort();
    const task = await startTask({
      'redis.url': `redis://127.0.0.1:${port}`,
      'queue.name': 'orders',
    });
    await expect(task.put(inserts(0, 1))).rejects.toMatchObject({ kind: 'connect' });
  });
});
