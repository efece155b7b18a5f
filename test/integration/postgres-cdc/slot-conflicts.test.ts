/**
 * The CDC source through `connect standalone` when its replication slot is wanted by
 * someone else: a second connector with a copied config (same slot.name) is refused
 * with 400 and the first one misses no change; a slot held by another replication
 * connection shows in the task's RUNNING trace (holder's pid and application_name)
 * and, after slot.max.retries, puts the task in FAILED.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { holdSlot } from '../../../connectors/postgres-cdc/test/support.ts';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  endOffset,
  readTopic,
  rest,
  startCdcWorker,
  useAdmin,
  useDatabase,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();
const TOPIC = 'PostgreSQL_server.public.t';

const database = (prefix: string) =>
  useDatabase(cluster(), prefix, 'CREATE TABLE t (id int PRIMARY KEY, v int)');

describe('Postgres CDC through a standalone worker: one slot, one reader', () => {
  it('refuses a second connector with the same slot.name (400, naming the first), and the first loses no change', async () => {
    const { db, sql } = await database('shared');
    const config = cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.t' });
    const worker = await startCdcWorker(useTmpDir(), 'first', config);
    await worker.process.waitForLine('snapshot done');
    await sql.query('INSERT INTO t VALUES (1, 1)');

    const second = await rest(worker, 'POST', '/connectors', { name: 'second', config });
    await sql.query('UPDATE t SET v = 2 WHERE id = 1');

    expect(second.status).toBe(400);
    expect(second.body.message).toMatch(/slot\.name/);
    expect(second.body.message).toMatch(/connector 'first'/);
    const admin = await useAdmin(worker.bootstrap);
    await waitFor('the insert and the update', async () =>
      ((await endOffset(admin, TOPIC)) ?? 0) >= 2 ? true : undefined,
    );
    const ops = (await readTopic(worker.bootstrap, TOPIC)).map((r) => {
      const v = JSON.parse(r.value!).payload;
      return `${v.op} ${v.after.id}=${v.after.v}`;
    });
    expect(ops).toEqual(['c 1=1', 'u 1=2']);
    const status = await rest(worker, 'GET', '/connectors/first/status');
    expect(status.body.tasks[0].state).toBe('RUNNING');
  });

  it('shows who holds the slot in the RUNNING trace, then fails the task after slot.max.retries', async () => {
    const { db } = await database('held');
    const holder = await holdSlot(cluster().connectionConfig(db), db, 'pg_recvlogical', db);
    onTestFinished(() => holder.release());
    const worker = await startCdcWorker(
      useTmpDir(),
      'held',
      cdcConnectorConfig(cluster(), db, {
        'table.include.list': 'public.t',
        'snapshot.mode': 'no_data',
        'slot.max.retries': '6',
        'slot.retry.delay.ms': '300',
      }),
    );
    const holderLine = new RegExp(`pid ${holder.pid} \\(application_name 'pg_recvlogical'`);

    const running = await waitFor('a RUNNING trace naming the holder', async () => {
      const s = await rest(worker, 'GET', '/connectors/held/status');
      const task = s.body.tasks?.[0];
      return task?.state === 'RUNNING' && holderLine.test(String(task.trace)) ? task : undefined;
    });
    const failed = await waitFor(
      'the task to fail',
      async () => {
        const s = await rest(worker, 'GET', '/connectors/held/status');
        const task = s.body.tasks?.[0];
        return task?.state === 'FAILED' ? task : undefined;
      },
      60_000,
    );

    expect(running.trace).toMatch(/retry \d of 6 .*slot\.max\.retries/);
    expect(failed.trace).toMatch(holderLine);
    expect(failed.trace).toMatch(/slot\.max\.retries=6/);
  });
});
