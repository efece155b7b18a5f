import { Queue, Worker } from 'bullmq';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ManualClock,
  noopPluginMetrics,
  type SourceOffset,
  type SourceRecord,
  type SourceTaskContext,
} from '../../../src/connect/api/index.ts';
import { type TestRedis, useRedis } from '../../../test/helpers/redis.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { BullMQSourceTask } from '../bullmq-source-task.ts';

function sourceContext(stored: SourceOffset | null): SourceTaskContext {
  return {
    connectorName: 'events',
    taskId: 0,
    clock: new ManualClock(0),
    offsetStorageReader: {
      offset: async () => stored,
      offsets: async () => new Map(),
    },
    reportTrouble: () => undefined,
    pluginMetrics: () => noopPluginMetrics,
    transactionContext: null,
    topicCreationOverride: () => undefined,
  };
}

async function startSource(
  redis: TestRedis,
  stored: SourceOffset | null,
  extra: Record<string, string> = {},
) {
  const task = new BullMQSourceTask();
  onTestFinished(() => task.stop());
  await task.start(
    {
      'redis.host': redis.connection.host,
      'redis.port': String(redis.connection.port),
      'queue.prefix': redis.bullPrefix,
      'queue.name': 'mail',
      topic: 'mail-events',
      ...extra,
    },
    sourceContext(stored),
  );
  return task;
}

/** Poll until `n` records came (an idle poll returns null within a second). */
async function pollUntil(
  task: BullMQSourceTask,
  n: number,
  into: SourceRecord[] = [],
): Promise<SourceRecord[]> {
  await waitFor(`${n} records`, async () => {
    const got = await task.poll();
    if (got) into.push(...got);
    return into.length >= n ? true : undefined;
  });
  return into;
}

/** A Worker on `mail` that fails jobs whose data says so and returns the others' id. */
function mailWorker(redis: TestRedis): Worker {
  const w = new Worker(
    'mail',
    async (job) => {
      if (job.data.fail) throw new Error(`bounce ${job.id}`);
      return { sent: job.id };
    },
    { connection: { ...redis.connection, maxRetriesPerRequest: null }, prefix: redis.bullPrefix },
  );
  w.on('error', () => {});
  onTestFinished(() => w.close());
  return w;
}

describe('BullMQSourceTask', () => {
  it('streams completed and failed job events keyed by job id once each, across a restart', async () => {
    const redis = await useRedis();
    const q = new Queue('mail', { connection: redis.connection, prefix: redis.bullPrefix });
    onTestFinished(() => q.close());
    mailWorker(redis);
    await q.addBulk([
      { name: 'm', data: {}, opts: { jobId: 'a' } },
      { name: 'm', data: { fail: true }, opts: { jobId: 'b' } },
    ]);
    const first = await startSource(redis, null);
    const records = await pollUntil(first, 2);
    expect(records.map((r) => [r.key, r.value])).toEqual([
      [
        'a',
        expect.objectContaining({
          event: 'completed',
          job_id: 'a',
          return_value: '{"sent":"a"}',
          failed_reason: null,
        }),
      ],
      [
        'b',
        expect.objectContaining({
          event: 'failed',
          job_id: 'b',
          return_value: null,
          failed_reason: 'bounce b',
        }),
      ],
    ]);
    await first.stop();
    // The runtime committed the offset of the last record; more jobs run meanwhile.
    await q.addBulk([{ name: 'm', data: {}, opts: { jobId: 'c' } }]);
    const second = await startSource(redis, records[1]!.sourceOffset);
    const more = await pollUntil(second, 1);
    // Give the stream a moment to show anything else it has: a poll with nothing new
    // returns null.
    expect(await second.poll()).toBeNull();
    expect(more.map((r) => r.key)).toEqual(['c']);
    expect(more[0]!.sourceOffset.stream_id).toBe(
      (more[0]!.value as { stream_id: string }).stream_id,
    );
  });

  it('fails, naming both ids, when the stream was trimmed past the stored position', async () => {
    const redis = await useRedis();
    const key = `${redis.bullPrefix}:mail:events`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await redis.client.xadd(key, '*', 'event', 'completed', 'jobId', `j${i}`))!);
    await redis.client.xtrim(key, 'MAXLEN', 2);
    const task = await startSource(redis, { stream_id: ids[1]! });
    await expect(task.poll()).rejects.toThrow(
      `BullMQ source: ${key} was trimmed past the stored position ${ids[1]} (its oldest entry is ${ids[3]}), so events after the position may have been deleted before they were read`,
    );
  });
});
