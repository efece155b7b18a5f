import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { useTaskDatabases, waitFor } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();

const TABLES = `
  CREATE TABLE a (id int PRIMARY KEY, v text, w text);
  INSERT INTO a SELECT i, 'v' || i, 'w' || i FROM generate_series(1, 50) i;
  CREATE TABLE b (id int PRIMARY KEY); INSERT INTO b VALUES (1);
  CREATE TABLE c (id int PRIMARY KEY); INSERT INTO c VALUES (1);`;

/** Tiny batches and queue: the snapshot stalls inside table a until the test polls. */
const STALLING = { 'max.batch.size': '1', 'max.queue.size': '2', 'snapshot.fetch.size': '1' };

type Envelope = { op: string; after: Record<string, unknown> | null };
const rows = (records: SourceRecord[], topic: string) =>
  records
    .filter((r) => r.topic === topic)
    .map((r) => [(r.value as Envelope).op, (r.value as Envelope).after]);

/** The tables of this database some other session holds a granted lock on. */
async function lockedTables(sql: pg.Client): Promise<string[]> {
  const result = await sql.query<{ relname: string }>(
    `SELECT DISTINCT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
      WHERE l.granted AND l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND c.relname IN ('a', 'b', 'c') ORDER BY 1`,
  );
  return result.rows.map((r) => r.relname);
}

describe('snapshot.* keys (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'snapkeys');

  async function start(db: string, overrides: Record<string, string>): Promise<TaskDriver> {
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    const driver = new TaskDriver(task, new InMemoryOffsets());
    await driver.start(config(db, overrides));
    return driver;
  }

  it('snapshots only snapshot.include.collection.list, reads a table through its override query, takes no table locks by default, then streams every table', async () => {
    const { db, sql } = await database(TABLES);
    const driver = await start(db, {
      ...STALLING,
      'snapshot.include.collection.list': 'public\\.(a|c)',
      'snapshot.select.statement.overrides': 'public.a',
      'snapshot.select.statement.overrides.public.a': 'SELECT id, v FROM public.a WHERE id > 40;',
    });

    // Stalled inside a: a is locked by its COPY alone, c (not read yet) not at all.
    expect(
      await waitFor('the snapshot reading a', async () =>
        (await lockedTables(sql)).length > 0 ? lockedTables(sql) : undefined,
      ),
    ).toEqual(['a']);
    await driver.pollUntil('the snapshot', (d) => d.length >= 11);
    await sql.query('INSERT INTO b VALUES (2)');
    const records = await driver.pollUntil('the insert into b', (d) => d.length >= 12);

    expect(rows(records, 'srv.public.a')).toEqual(
      Array.from({ length: 10 }, (_, i) => ['r', { id: 41 + i, v: `v${41 + i}`, w: null }]),
    );
    expect(rows(records, 'srv.public.c')).toEqual([['r', { id: 1 }]]);
    expect(rows(records, 'srv.public.b')).toEqual([['c', { id: 2 }]]);
  });

  it('locks every table it snapshots up front under snapshot.locking.mode=shared', async () => {
    const { db, sql } = await database(TABLES);
    const driver = await start(db, { ...STALLING, 'snapshot.locking.mode': 'SHARED' });

    expect(
      await waitFor('the snapshot locks', async () => {
        const locked = await lockedTables(sql);
        return locked.length === 3 ? locked : undefined;
      }),
    ).toEqual(['a', 'b', 'c']);
    await driver.pollUntil('the snapshot', (d) => d.length >= 52);
  });

  it('fails the snapshot within snapshot.lock.timeout.ms when shared locks cannot be had', async () => {
    const { db } = await database(TABLES);
    // The slot is made before the delay: a transaction holding an ACCESS EXCLUSIVE lock
    // has an xid, and a slot being created waits for every such transaction to end.
    const driver = await start(db, {
      'snapshot.locking.mode': 'shared',
      'snapshot.lock.timeout.ms': '200',
      'snapshot.delay.ms': '500',
    });
    const holder = await cluster().client(db);
    cleanups.push(() => holder.end());
    await holder.query('BEGIN; LOCK TABLE c IN ACCESS EXCLUSIVE MODE');

    expect((await driver.pollUntilFailure()).message).toMatch(/^snapshot failed: .*lock timeout/);
    await holder.query('ROLLBACK');
  });

  it('waits snapshot.delay.ms before the snapshot reads, and stop() ends the wait', async () => {
    const { db } = await database(TABLES);
    const driver = await start(db, { 'snapshot.delay.ms': '600000' });

    expect(await driver.pollOnce()).toEqual([]);
    await driver.task.stop();
    expect(driver.delivered).toEqual([]);
  });
});
