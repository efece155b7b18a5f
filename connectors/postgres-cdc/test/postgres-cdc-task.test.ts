import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { parseLsn } from '../src/lsn.ts';
import type { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { envelope, useTaskDatabases, waitFor } from './support.ts';
import { InMemoryOffsets } from './task-driver.ts';

const cluster = usePostgres();

/** `topic op id` per record; tombstones as `topic tombstone id`; heartbeats left out. */
function describeRecords(records: SourceRecord[]): string[] {
  return records
    .filter((r) => !r.topic.startsWith('__debezium-heartbeat'))
    .map((r) => {
      const id = (r.key as { id?: unknown } | null)?.id;
      if (r.value === null) return `${r.topic} tombstone ${id}`;
      return `${r.topic} ${envelope(r).op} ${id}`;
    });
}

const changes = (records: SourceRecord[]) =>
  records.filter((r) => !r.topic.startsWith('__debezium-heartbeat'));

describe('Postgres CDC source task, driven as the runtime drives it (real Postgres)', () => {
  const { cleanups, database, config, newDriver, run } = useTaskDatabases(cluster, 'task', {
    client: { options: SESSION_OPTIONS },
    config: { 'publication.autocreate.mode': 'filtered', 'status.update.interval.ms': '1000' },
  });

  async function confirmedLsn(sql: pg.Client, slot: string): Promise<number> {
    const r = await sql.query(
      'SELECT confirmed_flush_lsn::text AS l FROM pg_replication_slots WHERE slot_name = $1',
      [slot],
    );
    return parseLsn(r.rows[0].l);
  }

  it('snapshots existing rows of several tables, then streams inserts, updates and deletes in commit order', async () => {
    const { db, sql } = await database(`
      CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id int PRIMARY KEY, n int);
      INSERT INTO a SELECT i, 'a' || i FROM generate_series(1, 5) i; INSERT INTO b VALUES (1, 10), (2, 20);`);
    const driver = await run(db, { 'snapshot.fetch.size': '2' });
    const snapshot = await driver.pollUntil('the snapshot', (d) => changes(d).length >= 7);
    expect(describeRecords(snapshot).sort()).toEqual([
      'srv.public.a r 1',
      'srv.public.a r 2',
      'srv.public.a r 3',
      'srv.public.a r 4',
      'srv.public.a r 5',
      'srv.public.b r 1',
      'srv.public.b r 2',
    ]);
    expect(snapshot.map((r) => envelope(r).source.snapshot)).toEqual([
      'first',
      ...Array(3).fill('true'),
      'last_in_data_collection',
      'first_in_data_collection',
      'last',
    ]);
    expect(snapshot.every((r) => r.sourcePartition.server === 'srv')).toBe(true);
    expect(snapshot[6].sourceOffset).toMatchObject({ snapshot: true, last_snapshot_record: true });

    await sql.query(
      "BEGIN; INSERT INTO a VALUES (6, 'a6'); UPDATE b SET n = 11 WHERE id = 1; COMMIT",
    );
    await sql.query(
      "BEGIN; UPDATE a SET v = 'x' WHERE id = 1; DELETE FROM b WHERE id = 2; INSERT INTO b VALUES (3, 30); COMMIT",
    );
    const all = await driver.pollUntil('two transactions', (d) => changes(d).length >= 7 + 6);
    const streamed = changes(all).slice(7);
    expect(describeRecords(streamed)).toEqual([
      'srv.public.a c 6',
      'srv.public.b u 1',
      'srv.public.a u 1',
      'srv.public.b d 2',
      'srv.public.b tombstone 2',
      'srv.public.b c 3',
    ]);
    const commits = streamed.map((r) => r.sourceOffset.lsn_commit as number);
    expect(commits[0]).toBe(commits[1]);
    expect(new Set(commits.slice(2)).size).toBe(1);
    expect(commits[2]).toBeGreaterThan(commits[0]);
    expect(envelope(streamed[1]).after).toEqual({ id: 1, n: 11 });
    const metrics = (driver.task as PostgresCdcSourceTask).metrics();
    expect(metrics.phase).toBe('streaming');
    expect(metrics.snapshot.map((p) => [p.table.table, p.rowsDone])).toEqual([
      ['a', 5],
      ['b', 2],
    ]);
  });

  it("moves the slot's confirmed LSN only after commit(), and never past the offsets the runtime stored", async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db);
    await sql.query('BEGIN; INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); COMMIT');
    await sql.query('INSERT INTO t VALUES (3)');
    const records = changes(
      await driver.pollUntil('two transactions', (d) => changes(d).length >= 3),
    );
    const tx1 = records[0].sourceOffset.lsn_commit as number;
    const tx2 = records[2].sourceOffset.lsn_commit as number;
    // Acknowledged but not committed: Postgres must still hold both transactions.
    expect(await confirmedLsn(sql, db)).toBeLessThan(tx1);
    const task = driver.task as PostgresCdcSourceTask;
    expect(await task.slotLagBytes()).toBeGreaterThan(0);
    // The runtime stored offsets up to the end of tx1 only.
    await driver.flushOffsets(records[1]);
    const afterTx1 = await waitFor('tx1 confirmed', async () => {
      const l = await confirmedLsn(sql, db);
      return l > tx1 ? l : undefined;
    });
    expect(afterTx1).toBeLessThanOrEqual(tx2);
    await driver.flushOffsets();
    await waitFor('tx2 confirmed', async () =>
      (await confirmedLsn(sql, db)) > tx2 ? true : undefined,
    );
  });

  it('resumes after a crash from the stored offset: every change after it arrives, repeats only from the uncommitted window', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, Null), (2, NULL)',
    );
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await first.pollUntil('the snapshot', (d) => changes(d).length >= 2);
    await first.flushOffsets();
    await sql.query("INSERT INTO t VALUES (3, 'tx1')");
    await sql.query("BEGIN; DELETE FROM t WHERE id = 1; INSERT INTO t VALUES (4, 'tx2'); COMMIT");
    await sql.query("UPDATE t SET v = 'tx3' WHERE id = 2");
    const seen = describeRecords(
      await first.pollUntil('three transactions', (d) => changes(d).length >= 2 + 5),
    );
    expect(seen.slice(2)).toEqual([
      'srv.public.t c 3',
      'srv.public.t d 1',
      'srv.public.t tombstone 1',
      'srv.public.t c 4',
      'srv.public.t u 2',
    ]);
    // The offset flush wrote the delete's offset (not yet its tombstone's), then the
    // worker died before commit(): the slot was never told about tx1 or tx2.
    const deleteRecord = changes(first.delivered)[3];
    offsets.put(deleteRecord.sourcePartition, deleteRecord.sourceOffset);
    await first.task.stop();
    await sql.query("INSERT INTO t VALUES (5, 'while down')");

    const second = await run(db, {}, offsets);
    const resent = await second.pollUntil('the change made while down', (d) =>
      describeRecords(d).includes('srv.public.t c 5'),
    );
    expect(describeRecords(resent)).toEqual([
      'srv.public.t d 1',
      'srv.public.t tombstone 1',
      'srv.public.t c 4',
      'srv.public.t u 2',
      'srv.public.t c 5',
    ]);
  });

  it('fails to start with a clear message when the slot is gone (initial), and snapshots again under when_needed', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)',
    );
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await first.pollUntil('the snapshot', (d) => changes(d).length >= 2);
    await first.flushOffsets();
    await first.task.stop();
    await sql.query('SELECT pg_drop_replication_slot($1)', [db]);
    await sql.query('INSERT INTO t VALUES (3)');

    await expect(newDriver(offsets).start(config(db))).rejects.toThrow(
      new RegExp(`Replication slot '${db}' does not exist .*snapshot.mode=when_needed`),
    );

    const again = await run(db, { 'snapshot.mode': 'when_needed' }, offsets);
    const records = await again.pollUntil('a new snapshot', (d) => changes(d).length >= 3);
    expect(describeRecords(records)).toEqual([
      'srv.public.t r 1',
      'srv.public.t r 2',
      'srv.public.t r 3',
    ]);
    expect(envelope(records[2]).source.snapshot).toBe('last');
  });

  it('fails the snapshot on a numeric NaN in precise mode, naming table, column, value and the fix, and reads it once decimal.handling.mode=string', async () => {
    const { db } = await database(`CREATE TABLE prices (id int PRIMARY KEY, amount numeric(10, 2));
      INSERT INTO prices VALUES (1, 9.99), (2, 'NaN')`);
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);

    const error = await first.pollUntilFailure();

    expect(error.message).toMatch(
      /^snapshot failed: Table public\.prices, column amount: value 'NaN' cannot be represented with decimal\.handling\.mode=precise: .* Set decimal\.handling\.mode=string .* or decimal\.handling\.mode=double /,
    );
    expect((first.task as PostgresCdcSourceTask).metrics().phase).toBe('failed');
    await first.task.stop();
    const fixed = await run(db, { 'decimal.handling.mode': 'string' }, offsets);
    const records = await fixed.pollUntil('the snapshot', (d) => changes(d).length >= 2);
    expect(changes(records).map((r) => envelope(r).after)).toEqual([
      { id: 1, amount: '9.99' },
      { id: 2, amount: 'NAN' },
    ]);
  });

  it('fails the stream on a numeric infinity in precise mode without confirming past it, so a restart with decimal.handling.mode=string delivers the rest', async () => {
    const { db, sql } = await database('CREATE TABLE m (id int PRIMARY KEY, v numeric)');
    const offsets = new InMemoryOffsets();
    const first = await run(db, { 'snapshot.mode': 'no_data' }, offsets);
    await sql.query('INSERT INTO m VALUES (1, 1.5)');
    await first.pollUntil('the first insert', (d) => changes(d).length >= 1);
    await first.flushOffsets();
    await sql.query(
      "BEGIN; INSERT INTO m VALUES (2, 2); INSERT INTO m VALUES (3, '-Infinity'); COMMIT",
    );

    const error = await first.pollUntilFailure();

    expect(error.message).toMatch(
      /^replication stream failed: Table public\.m, column v: value '-Infinity' cannot be represented with decimal\.handling\.mode=precise: /,
    );
    // Whatever was acknowledged may still be flushed: it must not cover the failed change.
    await first.flushOffsets();
    await first.task.stop();
    const fixed = await run(
      db,
      { 'snapshot.mode': 'no_data', 'decimal.handling.mode': 'string' },
      offsets,
    );
    const all = () => [...changes(first.delivered), ...changes(fixed.delivered)];
    await fixed.pollUntil('the failed transaction', () => all().length >= 3);
    expect(describeRecords(all())).toEqual([
      'srv.public.m c 1',
      'srv.public.m c 2',
      'srv.public.m c 3',
    ]);
    expect(envelope(all()[2]).after).toEqual({ id: 3, v: 'NEGATIVE_INFINITY' });
  });

  it('takes an interrupted snapshot again from the start after a crash', async () => {
    const { db } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 30)',
    );
    const offsets = new InMemoryOffsets();
    const small = { 'snapshot.fetch.size': '5', 'max.batch.size': '5', 'max.queue.size': '10' };
    const first = await run(db, small, offsets);
    await first.pollUntil('part of the snapshot', (d) => d.length >= 5);
    await first.flushOffsets();
    expect(offsets.stored.size).toBe(1);
    await first.task.stop();

    const second = await run(db, small, offsets);
    const records = await second.pollUntil('the whole snapshot', (d) =>
      d.some((r) => envelope(r).source.snapshot === 'last'),
    );
    expect(records.map((r) => (r.key as { id: number }).id).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
  });

  it('keeps streaming after the replication connection is killed, without repeating what it already handed on', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, { 'snapshot.mode': 'no_data' });
    await sql.query('INSERT INTO t VALUES (1)');
    await driver.pollUntil('the first insert', (d) => changes(d).length >= 1);
    await sql.query(
      'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1',
      [db],
    );
    await sql.query('INSERT INTO t VALUES (2)');
    const records = await driver.pollUntil(
      'the insert after the reconnect',
      (d) => changes(d).length >= 2,
    );
    // One more poll round lets a wrongly repeated record show up.
    await sql.query('INSERT INTO t VALUES (3)');
    await driver.pollUntil('a third insert', (d) => changes(d).length >= 3);
    expect(describeRecords(records)).toEqual([
      'srv.public.t c 1',
      'srv.public.t c 2',
      'srv.public.t c 3',
    ]);
  });

  it('sends heartbeats carrying the current position and runs heartbeat.action.query', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE hb (at timestamptz)',
    );
    const driver = await run(db, {
      'snapshot.mode': 'no_data',
      'table.include.list': 'public.t',
      'heartbeat.interval.ms': '20',
      'heartbeat.action.query': 'INSERT INTO hb VALUES (now())',
    });
    await sql.query('INSERT INTO t VALUES (1)');
    const records = await driver.pollUntil('a heartbeat after the insert', (d) => {
      const i = d.findIndex((r) => r.topic === 'srv.public.t');
      return i >= 0 && d.slice(i).some((r) => r.topic === '__debezium-heartbeat.srv');
    });
    const insert = records.find((r) => r.topic === 'srv.public.t') as SourceRecord;
    const heartbeat = records
      .filter((r) => r.topic === '__debezium-heartbeat.srv')
      .at(-1) as SourceRecord;
    expect(heartbeat.key).toEqual({ serverName: 'srv' });
    expect(heartbeat.value).toEqual({ ts_ms: driver.clock.now() });
    expect(heartbeat.sourceOffset).toMatchObject({
      lsn_commit: insert.sourceOffset.lsn_commit,
      lsn_proc: insert.sourceOffset.lsn_proc,
    });
    expect(heartbeat.sourceOffset.lsn as number).toBeGreaterThanOrEqual(
      insert.sourceOffset.lsn as number,
    );
    await waitFor('the heartbeat query to run', async () => {
      const n = Number((await sql.query('SELECT count(*) AS n FROM hb')).rows[0].n);
      return n > 0 ? n : undefined;
    });
  });

  it('settles a pending poll at stop() and leaves no connection open (slot.drop.on.stop drops the slot)', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, {
      'snapshot.mode': 'no_data',
      'poll.interval.ms': '600000',
      'slot.drop.on.stop': 'true',
    });
    const task = driver.task as PostgresCdcSourceTask;
    await waitFor('streaming', async () =>
      task.metrics().phase === 'streaming' ? true : undefined,
    );
    const pending = task.poll();
    await task.stop();
    await expect(pending).resolves.toBeNull();
    const others = async () =>
      Number(
        (
          await sql.query(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [db],
          )
        ).rows[0].n,
      );
    // Backends exit just after their client's Terminate message: wait for that, not a time.
    await waitFor('the task connections to close', async () =>
      (await others()) === 0 ? true : undefined,
    );
    const replication = await sql.query('SELECT count(*) AS n FROM pg_stat_replication');
    expect(Number(replication.rows[0].n)).toBe(0);
    const slots = await sql.query(
      'SELECT count(*) AS n FROM pg_replication_slots WHERE slot_name = $1',
      [db],
    );
    expect(Number(slots.rows[0].n)).toBe(0);
  });

  it('hands out at most max.batch.size records per poll and reads the snapshot no further ahead than max.queue.size', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 100)',
    );
    const driver = await run(db, {
      'snapshot.fetch.size': '10',
      'max.batch.size': '5',
      'max.queue.size': '20',
    });
    const task = driver.task as PostgresCdcSourceTask;
    let largestBatch = 0;
    let largestQueue = 0;
    while (changes(driver.delivered).length < 100) {
      const batch = await driver.pollOnce();
      largestBatch = Math.max(largestBatch, batch.length);
      largestQueue = Math.max(largestQueue, task.metrics().queuedRecords);
    }
    // The reader waits for room before each chunk, so at most one chunk beyond the bound.
    expect(largestQueue).toBeLessThanOrEqual(20 + 10);
    await sql.query('INSERT INTO t SELECT generate_series(101, 400)');
    await driver.pollUntil('a 300-row transaction', (d) => changes(d).length >= 400);
    expect(largestBatch).toBeLessThanOrEqual(5);
    expect(driver.largestPoll).toBeLessThanOrEqual(5);
    const ids = changes(driver.delivered).map((r) => (r.key as { id: number }).id);
    expect(ids.slice(100)).toEqual(Array.from({ length: 300 }, (_, i) => 101 + i));
  });

  it('snapshot.mode no_data streams only new changes; initial_only snapshots and then streams nothing', async () => {
    const { db, sql } = await database(
      'CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)',
    );
    const offsets = new InMemoryOffsets();
    const only = await run(db, { 'snapshot.mode': 'initial_only' }, offsets);
    await only.pollUntil('the snapshot', (d) => changes(d).length >= 1);
    await only.flushOffsets();
    await sql.query('INSERT INTO t VALUES (2)');
    const task = only.task as PostgresCdcSourceTask;
    await waitFor('the snapshot to finish', async () =>
      task.metrics().phase === 'idle' ? true : undefined,
    );
    await only.pollOnce();
    expect(describeRecords(only.delivered)).toEqual(['srv.public.t r 1']);
    await only.task.stop();

    const db2 = (await database('CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)'))
      .db;
    const sql2 = new pg.Client(cluster().connectionConfig(db2));
    await sql2.connect();
    cleanups.push(() => sql2.end());
    const noData = await run(db2, { 'snapshot.mode': 'no_data' });
    await sql2.query('INSERT INTO t VALUES (2)');
    const records = await noData.pollUntil('the insert', (d) => changes(d).length >= 1);
    expect(describeRecords(records)).toEqual(['srv.public.t c 2']);
  });
});
