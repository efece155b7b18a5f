/**
 * Postgres to BullMQ end to end: the Postgres CDC source and this sink in one
 * `connect standalone` (embedded broker), a private Postgres (test/helpers/postgres.ts),
 * the jobs read by a BullMQ Worker. The Debezium change events are the CDC
 * connector's own, through the worker's JsonConverter with schemas.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { useRedis } from '../../../test/helpers/redis.ts';
import { useTmpDir } from '../../../test/helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  rest,
  startCdcWorker,
  useDatabase,
  waitFor,
} from '../../../test/integration/postgres-cdc/cdc-worker.ts';
import { recordJobs } from './support.ts';

const cluster = usePostgres();
const plugins = [
  fileURLToPath(new URL('../../postgres-cdc', import.meta.url)),
  fileURLToPath(new URL('..', import.meta.url)),
].join(',');

describe('Postgres change events to BullMQ jobs', () => {
  it('every row change of a captured table becomes one job named by its op, carrying the row', async () => {
    const redis = await useRedis();
    const { db, sql } = await useDatabase(
      cluster(),
      'bullmq',
      `CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL);
       INSERT INTO orders VALUES (1, 'new');`,
    );
    const worker = await startCdcWorker(
      useTmpDir('bullmq-cdc-'),
      'pg',
      cdcConnectorConfig(cluster(), db),
      {
        worker: { 'plugin.path': plugins },
      },
    );
    const created = await rest(worker, 'POST', '/connectors', {
      name: 'jobs',
      config: {
        'connector.class': 'connect.bullmq.BullMQSinkConnector',
        'topics.regex': 'PostgreSQL_server\\.public\\..*',
        'redis.host': redis.connection.host,
        'redis.port': String(redis.connection.port),
        'queue.prefix': redis.bullPrefix,
        'queue.name': 'cdc-${table}',
        'job.name': '${value.op}',
        'job.data': 'after',
        'job.remove.on.complete': 'true',
      },
    });
    expect(created.status).toBe(201);
    const jobs = recordJobs(redis, 'cdc-orders');
    await waitFor('the snapshot job', () => (jobs.runs.length === 1 ? true : undefined), 60_000);
    await sql.query("INSERT INTO orders VALUES (2, 'new')");
    await sql.query("UPDATE orders SET status = 'paid' WHERE id = 2");
    await sql.query('DELETE FROM orders WHERE id = 1');
    await waitFor('the delete job', () => (jobs.runs.length >= 4 ? true : undefined), 60_000);
    const topic = 'PostgreSQL_server.public.orders';
    expect(jobs.runs.map((r) => [r.name, r.id, r.data])).toEqual([
      ['r', `${topic}-0-0`, { id: 1, status: 'new' }],
      ['c', `${topic}-0-1`, { id: 2, status: 'new' }],
      ['u', `${topic}-0-2`, { id: 2, status: 'paid' }],
      // The delete's job carries the before image, with the columns Postgres did not
      // send (REPLICA IDENTITY DEFAULT) as null; its tombstone (offset 4) adds none.
      ['d', `${topic}-0-3`, { id: 1, status: null }],
    ]);
    const status = await rest(worker, 'GET', '/connectors/jobs/status');
    expect(status.body.tasks[0].state).toBe('RUNNING');
  }, 180_000);
});
