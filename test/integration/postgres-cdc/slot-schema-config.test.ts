/**
 * The CDC source through `connect standalone`, beyond the happy path: the slot keeps
 * advancing while the captured table is idle and another is busy; ALTER TABLE ADD and
 * DROP COLUMN mid-stream change the events' schema; bad configs are refused over REST
 * with per-field messages, and a wrong password or wal_level puts the task in FAILED
 * with a message saying what to fix.
 */
import type pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startPostgres, usePostgres } from '../../helpers/postgres.ts';
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

async function lsnOf(sql: pg.Client, query: string, params: unknown[] = []): Promise<number> {
  const r = await sql.query(query, params);
  return r.rows[0]?.l == null ? 0 : Number(r.rows[0].l);
}

const CURRENT_LSN = "SELECT (pg_current_wal_lsn() - '0/0')::bigint::text AS l";
const CONFIRMED_LSN =
  "SELECT (confirmed_flush_lsn - '0/0')::bigint::text AS l FROM pg_replication_slots WHERE slot_name = $1";

const database = (prefix: string) => useDatabase(cluster(), prefix);

/**
 * The trace of the connector or its task once either is FAILED: the start-up checks
 * run in the connector's start (so the connector fails) and again in the task's.
 */
async function failure(worker: { restUrl: string }, name: string): Promise<string> {
  return waitFor(`${name} to fail`, async () => {
    const s = await rest(worker, 'GET', `/connectors/${name}/status`);
    if (s.body.connector?.state === 'FAILED') return String(s.body.connector.trace);
    const task = s.body.tasks?.find((t: { state: string }) => t.state === 'FAILED');
    return task ? String(task.trace) : undefined;
  });
}

describe('Postgres CDC through a standalone worker: slot, schema changes, bad configs', () => {
  it('keeps confirming the slot while the captured table is idle and an uncaptured one is busy', async () => {
    const { db, sql } = await database('idle');
    await sql.query('CREATE TABLE idle (id int PRIMARY KEY); CREATE TABLE busy (id int, v text)');
    await startCdcWorker(
      useTmpDir(),
      'idle',
      cdcConnectorConfig(cluster(), db, {
        'table.include.list': 'public.idle',
        'status.update.interval.ms': '200',
      }),
    );
    await waitFor('the slot', async () => (await lsnOf(sql, CONFIRMED_LSN, [db])) || undefined);
    const before = await lsnOf(sql, CONFIRMED_LSN, [db]);
    for (let i = 0; i < 50; i++) {
      await sql.query("INSERT INTO busy SELECT g, repeat('x', 200) FROM generate_series(1, 200) g");
    }
    const target = await lsnOf(sql, CURRENT_LSN);
    expect(target).toBeGreaterThan(before);
    const confirmed = await waitFor('the slot confirmed past the busy table’s WAL', async () => {
      const c = await lsnOf(sql, CONFIRMED_LSN, [db]);
      return c >= target ? c : undefined;
    });
    expect(confirmed).toBeGreaterThanOrEqual(target);
  });

  it('follows ALTER TABLE ADD and DROP COLUMN mid-stream into the topic', async () => {
    const { db, sql } = await database('ddl');
    await sql.query('CREATE TABLE t (id int PRIMARY KEY, a text)');
    const worker = await startCdcWorker(
      useTmpDir(),
      'ddl',
      cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.t' }),
    );
    // Mid-stream: DDL between the slot's creation and the snapshot's table lock would
    // change the table under the snapshot (see snapshot-reader.ts), which is not this test.
    await worker.process.waitForLine('snapshot done');
    await sql.query("INSERT INTO t VALUES (1, 'a')");
    await sql.query('ALTER TABLE t ADD COLUMN b int NOT NULL DEFAULT 7');
    await sql.query("INSERT INTO t VALUES (2, 'b', 8)");
    await sql.query('UPDATE t SET b = 9 WHERE id = 1');
    await sql.query('ALTER TABLE t DROP COLUMN a');
    await sql.query('INSERT INTO t VALUES (3, 10)');
    const topic = 'PostgreSQL_server.public.t';
    const admin = await useAdmin(worker.bootstrap);
    await waitFor('4 events', async () => ((await endOffset(admin, topic)) ?? 0) >= 4 || undefined);
    const values = (await readTopic(worker.bootstrap, topic)).map((r) => JSON.parse(r.value!));
    expect(values.map((v) => v.payload.after)).toEqual([
      { id: 1, a: 'a' },
      { id: 2, a: 'b', b: 8 },
      { id: 1, a: 'a', b: 9 },
      { id: 3, b: 10 },
    ]);
    const afterFields = (v: { schema: { fields: Array<{ field: string; fields: unknown[] }> } }) =>
      (
        v.schema.fields.find((f) => f.field === 'after')!.fields as Array<Record<string, unknown>>
      ).map((f) => `${f.field}:${f.type}:${f.optional}`);
    expect(afterFields(values[0])).toEqual(['id:int32:false', 'a:string:true']);
    expect(afterFields(values[1])).toEqual(['id:int32:false', 'a:string:true', 'b:int32:false']);
    expect(afterFields(values[3])).toEqual(['id:int32:false', 'b:int32:false']);
  });

  it('answers bad configs with 400 and per-field errors, and fails the task on a wrong password', async () => {
    const { db, sql } = await database('bad');
    await sql.query('CREATE TABLE t (id int PRIMARY KEY)');
    const good = cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.t' });
    // `connect standalone` needs one connector file: a good one, next to the bad ones.
    const worker = await startCdcWorker(useTmpDir(), 'good', good);

    const { 'database.hostname': _, ...noHost } = good;
    const created = await rest(worker, 'POST', '/connectors', {
      name: 'bad',
      config: { ...noHost, 'snapshot.mode': 'sometimes', 'database.port': 'five' },
    });
    expect(created.status).toBe(400);
    expect(created.body.error_code).toBe(400);
    expect(created.body.message).toMatch(/database\.hostname/);

    const validated = await rest(
      worker,
      'PUT',
      '/connector-plugins/PostgresConnector/config/validate',
      { name: 'bad', ...noHost, 'snapshot.mode': 'sometimes', 'database.port': 'five' },
    );
    expect(validated.status).toBe(200);
    const errors = Object.fromEntries(
      validated.body.configs
        .filter((c: { value: { errors: string[] } }) => c.value.errors.length > 0)
        .map((c: { value: { name: string; errors: string[] } }) => [c.value.name, c.value.errors]),
    );
    expect(validated.body.error_count).toBe(Object.keys(errors).length);
    expect(Object.keys(errors).sort()).toEqual(
      ['database.hostname', 'database.port', 'snapshot.mode'].sort(),
    );
    expect(errors['snapshot.mode'].join()).toMatch(/sometimes/);

    const wrong = await rest(worker, 'POST', '/connectors', {
      name: 'wrong-password',
      config: { ...good, 'slot.name': `${db}_2`, 'database.password': 'not-the-password' },
    });
    expect(wrong.status).toBe(201);
    expect(await failure(worker, 'wrong-password')).toMatch(/password/i);
  });

  it('fails the task with a message naming wal_level when the server is not logical', {
    timeout: 120_000,
  }, async () => {
    const replica = await startPostgres({ settings: { wal_level: 'replica' } });
    onTestFinished(() => replica.stop());
    const db = await replica.freshDatabase('replica');
    const sql = await replica.client(db);
    await sql.query('CREATE TABLE t (id int PRIMARY KEY)');
    await sql.end();
    const worker = await startCdcWorker(
      useTmpDir(),
      'replica',
      cdcConnectorConfig(replica, db, { 'table.include.list': 'public.t' }),
    );
    const trace = await failure(worker, 'replica');
    expect(trace).toMatch(/wal_level=replica/);
    expect(trace).toMatch(/wal_level = logical/);
  });
});
