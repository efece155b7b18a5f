/**
 * The sink in a real worker: `connect standalone` with the embedded broker and only
 * this plugin on plugin.path (test/integration/postgres-cdc/cdc-worker.ts starts it),
 * records produced with kafkajs, jobs read by a BullMQ Worker in this process, on the
 * shared Redis under the test's own prefix (or on a private redis-server where the
 * test stops Redis).
 */
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test/helpers/ports.ts';
import { type TestRedis, useRedis } from '../../../test/helpers/redis.ts';
import { useTmpDir } from '../../../test/helpers/tmp-dir.ts';
import {
  endOffset,
  readTopic,
  rest,
  startCdcWorker,
  useAdmin,
  waitFor,
} from '../../../test/integration/postgres-cdc/cdc-worker.ts';
import { usePrivateRedis } from './private-redis.ts';
import { recordJobs } from './support.ts';

const pluginPath = fileURLToPath(new URL('..', import.meta.url));
const TOPIC = 'shop.public.orders';

/** The part of a /config/validate answer the tests read. */
interface ConfigInfo {
  value: { name: string; value: string | null; errors: string[] } | null;
}

function sinkConnector(
  redis: { host: string; port: number; prefix: string },
  extra: Record<string, string> = {},
) {
  return {
    'connector.class': 'BullMQSinkConnector',
    'tasks.max': '1',
    topics: TOPIC,
    'redis.host': redis.host,
    'redis.port': String(redis.port),
    'queue.prefix': redis.prefix,
    'queue.name': 'cdc-${table}',
    'job.name': '${value.op}',
    'job.data': 'after',
    'job.remove.on.complete': 'true',
    'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'key.converter.schemas.enable': 'false',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': 'false',
    'consumer.override.max.poll.records': '2000',
    'errors.retry.timeout': '-1',
    ...extra,
  };
}

function event(id: number): { key: string; value: string } {
  return {
    key: JSON.stringify({ id }),
    value: JSON.stringify({
      before: null,
      after: { id, status: 'new' },
      source: { db: 'shop', schema: 'public', table: 'orders' },
      op: 'c',
      ts_ms: 1_700_000_000_000,
    }),
  };
}

async function produce(
  bootstrap: string,
  messages: Array<{ key: string; value: string }>,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'bullmq-e2e',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] }).catch(() => false);
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (let i = 0; i < messages.length; i += 5000) {
      await producer.send({ topic: TOPIC, messages: messages.slice(i, i + 5000) });
    }
  } finally {
    await producer.disconnect();
  }
}

async function committed(bootstrap: string, connector: string): Promise<number> {
  const admin = await useAdmin(bootstrap);
  const [t] = await admin.fetchOffsets({ groupId: `connect-${connector}`, topics: [TOPIC] });
  return Number(t?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
}

function shared(redis: TestRedis) {
  return { host: redis.connection.host, port: redis.connection.port, prefix: redis.bullPrefix };
}

describe('BullMQ sink in a worker', () => {
  it('validates configs over REST with per-field messages, the password hidden', async () => {
    const redis = await useRedis();
    // Standalone needs a connector to run; a valid one.
    const worker = await startCdcWorker(
      useTmpDir('bullmq-e2e-'),
      'jobs',
      sinkConnector(shared(redis)),
      {
        worker: { 'plugin.path': pluginPath },
      },
    );
    const down = await freePort();
    const { status, body } = await rest(
      worker,
      'PUT',
      '/connector-plugins/BullMQSinkConnector/config/validate',
      {
        ...sinkConnector({ ...shared(redis), port: down }),
        name: 'probe',
        'redis.password': 'hunter2',
        'queue.name': '${nope}',
      },
    );
    expect(status).toBe(200);
    const errors = Object.fromEntries(
      body.configs
        .filter((c: ConfigInfo) => (c.value?.errors.length ?? 0) > 0)
        .map((c: ConfigInfo) => [c.value?.name, c.value?.errors]),
    );
    expect(errors).toEqual({
      'queue.name': [expect.stringMatching(/unknown placeholder \$\{nope\}/)],
    });
    expect(
      body.configs.find((c: ConfigInfo) => c.value?.name === 'redis.password')?.value?.value,
    ).toBe('[hidden]');
    const unreachable = await rest(
      worker,
      'PUT',
      '/connector-plugins/BullMQSinkConnector/config/validate',
      {
        ...sinkConnector({ ...shared(redis), port: down }),
        name: 'probe',
        'redis.password': 'hunter2',
      },
    );
    expect(unreachable.body.error_count).toBe(1);
    expect(JSON.stringify(unreachable.body)).toContain(
      `Redis at redis://127.0.0.1:${down}/0 is not usable: ECONNREFUSED`,
    );
    expect(JSON.stringify(unreachable.body)).not.toContain('hunter2');
  });

  it('kill -9 of the worker in the middle of 50k records, then a restart: exactly 50k jobs were ever created', async () => {
    const redis = await useRedis();
    const dir = useTmpDir('bullmq-e2e-');
    const jobs = recordJobs(redis, 'cdc-orders', 50);
    const config = sinkConnector(shared(redis));
    const first = await startCdcWorker(dir, 'jobs', config, {
      worker: { 'plugin.path': pluginPath },
    });
    await produce(
      first.bootstrap,
      Array.from({ length: 50_000 }, (_, i) => event(i)),
    );
    await waitFor('some jobs run', () => (jobs.runs.length > 5000 ? true : undefined), 120_000);
    first.process.signal('SIGKILL');
    await first.process.exited;
    const killedAt = jobs.runs.length;
    const second = await startCdcWorker(dir, 'jobs', config, {
      worker: { 'plugin.path': pluginPath },
    });
    await waitFor(
      'offset 50000 committed',
      async () => ((await committed(second.bootstrap, 'jobs')) === 50_000 ? true : undefined),
      180_000,
    );
    const q = new Queue('cdc-orders', { connection: redis.connection, prefix: redis.bullPrefix });
    await waitFor(
      'queue drained',
      async () => ((await q.count()) + (await q.getActiveCount()) === 0 ? true : undefined),
      60_000,
    );
    await q.close();
    const ids = jobs.runs.map((r) => r.id);
    expect(killedAt).toBeLessThan(50_000);
    expect(new Set(ids).size).toBe(50_000);
    expect(ids.length).toBe(50_000);
  }, 300_000);

  it('sends poison records to the dead letter queue and adds jobs for the rest', async () => {
    const redis = await useRedis();
    const jobs = recordJobs(redis, 'cdc-orders');
    const worker = await startCdcWorker(
      useTmpDir('bullmq-e2e-'),
      'jobs',
      sinkConnector(shared(redis), {
        'errors.tolerance': 'all',
        'errors.deadletterqueue.topic.name': 'jobs-dlq',
        'errors.deadletterqueue.topic.replication.factor': '1',
        'errors.deadletterqueue.context.headers.enable': 'true',
      }),
      { worker: { 'plugin.path': pluginPath } },
    );
    await produce(worker.bootstrap, [
      event(1),
      { key: '{"id":2}', value: '{not json' },
      { key: '{"id":3}', value: JSON.stringify({ id: 3 }) },
      event(4),
    ]);
    await waitFor('2 jobs run', () => (jobs.runs.length === 2 ? true : undefined), 60_000);
    const dlq = await waitFor(
      '2 records in the DLQ',
      async () => {
        const r = await readTopic(worker.bootstrap, 'jobs-dlq').catch(() => []);
        return r.length === 2 ? r : undefined;
      },
      60_000,
    );
    // Converter failures and the task's reports reach the DLQ in no promised order.
    expect(dlq.map((r) => r.key).sort()).toEqual(['{"id":2}', '{"id":3}']);
    expect(jobs.runs.map((r) => r.data)).toEqual([
      { id: 1, status: 'new' },
      { id: 4, status: 'new' },
    ]);
  }, 120_000);

  it('Redis stopped for a while: RUNNING with the outage in the status trace, then every job once', async () => {
    const port = await freePort();
    const redis = await usePrivateRedis(useTmpDir('bullmq-redis-'), port);
    const target = { host: '127.0.0.1', port, prefix: 'bull' };
    const worker = await startCdcWorker(useTmpDir('bullmq-e2e-'), 'jobs', sinkConnector(target), {
      worker: { 'plugin.path': pluginPath },
    });
    await produce(
      worker.bootstrap,
      Array.from({ length: 1000 }, (_, i) => event(i)),
    );
    const q = new Queue('cdc-orders', {
      connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
    });
    q.on('error', () => {});
    await waitFor('1000 jobs', async () => ((await q.count()) === 1000 ? true : undefined), 60_000);
    await redis.kill();
    await produce(
      worker.bootstrap,
      Array.from({ length: 1000 }, (_, i) => event(1000 + i)),
    );
    const trace = await waitFor(
      'the outage in the status',
      async () => {
        const { body } = await rest(worker, 'GET', '/connectors/jobs/status');
        const t = body.tasks[0];
        return t.state === 'RUNNING' && /Redis at .* unavailable since/.test(t.trace ?? '')
          ? t.trace
          : undefined;
      },
      60_000,
    );
    expect(trace).toMatch(
      new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port}/0 unavailable since`),
    );
    await redis.restart();
    await waitFor('2000 jobs', async () => ((await q.count()) === 2000 ? true : undefined), 60_000);
    const ids = (await q.getJobs(['waiting'], 0, -1)).map((j) => j.id);
    expect(new Set(ids).size).toBe(2000);
    await waitFor(
      'the trace cleared',
      async () => {
        const { body } = await rest(worker, 'GET', '/connectors/jobs/status');
        return body.tasks[0].state === 'RUNNING' && body.tasks[0].trace === undefined
          ? true
          : undefined;
      },
      30_000,
    );
    await q.close();
  }, 180_000);

  it('the source: completed and failed job events arrive in the topic once each across a worker restart', async () => {
    const redis = await useRedis();
    const dir = useTmpDir('bullmq-e2e-');
    const source = {
      'connector.class': 'BullMQSourceConnector',
      'tasks.max': '1',
      'redis.host': redis.connection.host,
      'redis.port': String(redis.connection.port),
      'queue.prefix': redis.bullPrefix,
      'queue.name': 'mail',
      topic: 'mail-events',
      'topic.creation.default.replication.factor': '-1',
      'topic.creation.default.partitions': '1',
    };
    const q = new Queue('mail', { connection: redis.connection, prefix: redis.bullPrefix });
    const w = new Worker(
      'mail',
      async (job) => {
        if (job.data.fail) throw new Error(`bounce ${job.id}`);
        return job.id;
      },
      {
        connection: { ...redis.connection, maxRetriesPerRequest: null },
        prefix: redis.bullPrefix,
        concurrency: 10,
      },
    );
    w.on('error', () => {});
    const jobs = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        name: 'm',
        data: { fail: (from + i) % 5 === 0 },
        opts: { jobId: `m${from + i}` },
      }));
    try {
      await q.addBulk(jobs(0, 100));
      const first = await startCdcWorker(dir, 'events', source, {
        worker: { 'plugin.path': pluginPath },
      });
      const admin = await useAdmin(first.bootstrap);
      await waitFor(
        '100 events',
        async () => ((await endOffset(admin, 'mail-events')) === 100 ? true : undefined),
        60_000,
      );
      await first.process.stop();
      await q.addBulk(jobs(100, 100));
      const second = await startCdcWorker(dir, 'events', source, {
        worker: { 'plugin.path': pluginPath },
      });
      // A last job after all others: its event comes after any re-sent one (the
      // source reads the stream in order), so once it is in the topic, all are.
      await q.add('m', {}, { jobId: 'last' });
      const records = await waitFor(
        'the last event',
        async () => {
          const r = await readTopic(second.bootstrap, 'mail-events');
          return r.some((x) => x.key?.includes('last')) ? r : undefined;
        },
        60_000,
      );
      const keys = records.map((r) => r.key);
      expect(new Set(keys).size).toBe(201);
      expect(keys.length).toBe(201);
      const failed = records.filter((r) => r.value?.includes('"event":"failed"'));
      expect(failed.length).toBe(40);
      expect(failed[0]?.value).toMatch(/"failed_reason":"bounce m\d+"/);
    } finally {
      await w.close();
      await q.close();
    }
  }, 180_000);
});
