/**
 * The task and its replication slot, against a real Postgres: a slot is dropped only
 * when this connector made it and nobody holds it; a slot another process holds is
 * retried within slot.max.retries and then fails the task, naming the holder; lost
 * connections are retried within errors.max.retries; every retry is reported through
 * reportTrouble (and metrics()) and cleared once the task streams again.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { envelope, holdSlot, useTaskDatabases, waitFor } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();

const changes = (records: SourceRecord[]) =>
  records
    .filter((r) => !r.topic.startsWith('__debezium-heartbeat') && r.value !== null)
    .map((r) => `${envelope(r).op} ${(r.key as { id: number }).id}`);

/** Settles with what `p` gave, or rejects after `ms`: a hang is a failure, not a wait. */
function within<T>(p: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

describe('Postgres CDC task and its replication slot (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'slot', {
    config: { 'publication.autocreate.mode': 'filtered', 'status.update.interval.ms': '1000' },
  });

  function driver(offsets = new InMemoryOffsets()): TaskDriver {
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    return new TaskDriver(task, offsets);
  }

  async function run(
    db: string,
    overrides: Record<string, string> = {},
    offsets = new InMemoryOffsets(),
  ): Promise<TaskDriver> {
    const d = driver(offsets);
    await within(d.start(config(db, overrides)), 'task start');
    return d;
  }

  async function slotRow(sql: pg.Client, slot: string) {
    const r = await sql.query(
      'SELECT active, active_pid, confirmed_flush_lsn::text AS confirmed FROM pg_replication_slots WHERE slot_name = $1',
      [slot],
    );
    return r.rows[0] as
      | { active: boolean; active_pid: number | null; confirmed: string }
      | undefined;
  }

  const holder = async (db: string, applicationName: string) => {
    const h = await holdSlot(cluster().connectionConfig(db), db, applicationName);
    cleanups.push(() => h.release());
    return h;
  };

  it('refuses a slot it did not create (no stored offset) instead of dropping it, and says how to go on', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    await sql.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [db]);
    const before = await slotRow(sql, db);

    const d = driver();
    const error = await within(
      d.start(config(db)).then(
        () => null,
        (e: Error) => e,
      ),
      'task start',
    );

    expect(error?.message).toMatch(
      new RegExp(
        `Replication slot '${db}' already exists but this connector has no stored offset.*` +
          `slot\\.name.*SELECT pg_drop_replication_slot\\('${db}'\\).*snapshot\\.mode=no_data`,
      ),
    );
    expect(await slotRow(sql, db)).toEqual(before);
  });

  it('drops at stop a slot it made for a first snapshot it handed nothing on from, so the next start is not refused', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await waitFor('the empty snapshot to end', async () =>
      (first.task as PostgresCdcSourceTask).metrics().phase === 'streaming' ? true : undefined,
    );
    await first.flushOffsets();
    expect(offsets.stored.size).toBe(0);
    await first.task.stop();
    expect(await slotRow(sql, db)).toBeUndefined();
    await sql.query('INSERT INTO t VALUES (1)');

    const second = await run(db, {}, offsets);
    const records = await second.pollUntil('the new snapshot', (d) => changes(d).length >= 1);

    expect(changes(records)).toEqual(['r 1']);
  });

  it('never drops the slot another task streams from: the second task is refused and the first misses no change', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY, v int)');
    const first = await run(db, { 'snapshot.mode': 'initial' });
    await waitFor('the first task to stream', async () =>
      (first.task as PostgresCdcSourceTask).metrics().phase === 'streaming' ? true : undefined,
    );
    await sql.query('INSERT INTO t VALUES (1, 1)');

    const second = driver();
    const error = await within(
      second.start(config(db)).then(
        () => null,
        (e: Error) => e,
      ),
      'the second task start',
    );
    await sql.query('UPDATE t SET v = 2 WHERE id = 1');

    expect(error?.message).toMatch(new RegExp(`Replication slot '${db}' already exists`));
    expect(error?.message).toMatch(/held by pid \d+/);
    const seen = await first.pollUntil('the insert and the update', (d) => changes(d).length >= 2);
    expect(changes(seen)).toEqual(['c 1', 'u 1']);
  });

  it('waits for its own slot while another process holds it, reporting the holder, then fails after slot.max.retries without dropping it', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 30)',
    );
    const offsets = new InMemoryOffsets();
    const small = { 'snapshot.fetch.size': '5', 'max.batch.size': '5', 'max.queue.size': '10' };
    const first = await run(db, small, offsets);
    await first.pollUntil('part of the snapshot', (d) => d.length >= 5);
    await first.flushOffsets();
    await first.task.stop();
    // The stored offset says "snapshot interrupted": the slot is this connector's own.
    const thief = await holder(db, 'slot-thief');

    const second = await run(
      db,
      { ...small, 'slot.max.retries': '2', 'slot.retry.delay.ms': '50' },
      offsets,
    );
    const error = await second.pollUntilFailure();

    const troubles = second.troubles.filter((t): t is string => t !== null);
    expect(troubles.length).toBeGreaterThanOrEqual(2);
    for (const t of troubles) {
      expect(t).toMatch(new RegExp(`pid ${thief.pid}`));
      expect(t).toMatch(/application_name 'slot-thief'/);
      expect(t).toMatch(/retained WAL/);
    }
    expect(troubles[0]).toMatch(/retry 1 of 2/);
    expect(error.message).toMatch(new RegExp(`Replication slot '${db}' is active`));
    expect(error.message).toMatch(new RegExp(`pid ${thief.pid}.*application_name 'slot-thief'`));
    expect(error.message).toMatch(/slot\.max\.retries/);
    expect(await slotRow(sql, db)).toMatchObject({ active: true, active_pid: thief.pid });
  });

  it('retries streaming from a slot held elsewhere within slot.max.retries, reporting the holder and the retained WAL', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const thief = await holder(db, 'pg_recvlogical');
    await sql.query('INSERT INTO t SELECT generate_series(1, 1000)');

    const d = await run(db, {
      'snapshot.mode': 'no_data',
      'slot.max.retries': '3',
      'slot.retry.delay.ms': '50',
    });
    const error = await d.pollUntilFailure();

    const troubles = d.troubles.filter((t): t is string => t !== null);
    expect(troubles.map((t) => /retry (\d) of 3/.exec(t)?.[1])).toEqual(['1', '2', '3']);
    expect(troubles[0]).toMatch(
      new RegExp(`held by pid ${thief.pid} \\(application_name 'pg_recvlogical'`),
    );
    expect(troubles[0]).toMatch(/retained WAL \d+ (bytes|kB|MB)/);
    expect(error.message).toMatch(
      new RegExp(`pid ${thief.pid}.*application_name 'pg_recvlogical'.*slot\\.max\\.retries=3`),
    );
    const metrics = (d.task as PostgresCdcSourceTask).metrics();
    expect(metrics.phase).toBe('failed');
    expect(metrics.slotLagBytes).toBeGreaterThan(0);
  });

  it('clears the reported trouble once the holder lets go and the task streams', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const thief = await holder(db, 'slot-thief');
    const d = await run(db, {
      'snapshot.mode': 'no_data',
      'slot.max.retries': '10000',
      'slot.retry.delay.ms': '50',
    });
    const task = d.task as PostgresCdcSourceTask;
    await waitFor('a reported trouble', async () => {
      await d.pollOnce();
      return d.troubles.length > 0 ? true : undefined;
    });
    expect(task.metrics().detail).toBe(d.troubles.at(-1));

    await thief.release();
    await sql.query('INSERT INTO t VALUES (1)');
    await d.pollUntil('the insert', (delivered) => changes(delivered).length >= 1);

    expect(d.troubles.at(-1)).toBeNull();
    expect(task.metrics()).toMatchObject({ phase: 'streaming', detail: null });
  });

  it('fails after errors.max.retries consecutive lost connections, saying what it retried', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const d = await run(db, { 'snapshot.mode': 'no_data', 'errors.max.retries': '2' });
    await sql.query('INSERT INTO t VALUES (1)');
    await d.pollUntil('the insert', (delivered) => changes(delivered).length >= 1);
    const admin = await cluster().client('postgres');
    cleanups.push(async () => {
      await admin.query(`ALTER DATABASE ${admin.escapeIdentifier(db)} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    });
    // Every reconnect is now refused (55000), a retriable error like a server restart.
    await admin.query(`ALTER DATABASE ${admin.escapeIdentifier(db)} WITH ALLOW_CONNECTIONS false`);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db],
    );

    const error = await d.pollUntilFailure();

    const troubles = d.troubles.filter((t): t is string => t !== null);
    expect(troubles.map((t) => /retry (\d) of 2/.exec(t)?.[1])).toEqual(['1', '2']);
    expect(error.message).toMatch(/errors\.max\.retries=2/);
  });
});
