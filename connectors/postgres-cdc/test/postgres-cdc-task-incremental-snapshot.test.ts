/**
 * The source signal channel and incremental snapshots through the whole task, against
 * real Postgres: the signal table captured though the include list leaves it out,
 * execute-snapshot read in chunks while updates and deletes stream (the topic,
 * compacted, ends equal to the table), a restart in the middle resuming at the last
 * chunk, stop/pause/resume, tables without a key, and a table a config change added to
 * the include list snapshotted by itself. Then the kafka signal channel (signals sent
 * by a real producer to an embedded broker) and the file signal channel.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { startTestBroker, type TestBroker } from '../../../test/helpers/broker.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { createTmpDir } from '../../../test/helpers/tmp-dir.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { envelope, useTaskDatabases, waitFor } from './support.ts';
import { InMemoryOffsets } from './task-driver.ts';

const cluster = usePostgres();

const SIGNAL_DDL =
  'CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));';
const TOPIC = 'srv.public.t';
const COLLECTIONS = 'incremental_snapshot_collections';

const isRead = (r: SourceRecord) => r.value !== null && envelope(r).op === 'r';

/** The topic `topic` after compaction: key id -> the row's value, deleted keys gone. */
function compacted(records: readonly SourceRecord[], topic = TOPIC): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of records) {
    if (r.topic !== topic) continue;
    const id = (r.key as { id: number }).id;
    const after = r.value === null ? null : envelope(r).after;
    if (after === null) out.delete(id);
    else out.set(id, after.v as number);
  }
  return out;
}

async function tableContent(sql: pg.Client, table = 't'): Promise<Map<number, number>> {
  const r = await sql.query(`SELECT id, v FROM ${table} ORDER BY id`);
  return new Map(r.rows.map((row) => [Number(row.id), Number(row.v)]));
}

/** The snapshot is over once a record after its first read no longer carries its state. */
function snapshotDone(delivered: readonly SourceRecord[]): boolean {
  const firstRead = delivered.findIndex(isRead);
  if (firstRead < 0) return false;
  const last = delivered[delivered.length - 1];
  return delivered.length - 1 > firstRead && !(COLLECTIONS in last.sourceOffset);
}

async function signal(sql: pg.Client, id: string, type: string, data: unknown): Promise<void> {
  await sql.query('INSERT INTO debezium_signal VALUES ($1, $2, $3)', [
    id,
    type,
    JSON.stringify(data),
  ]);
}

describe('incremental snapshots from the signal table (real Postgres)', () => {
  const { database, config, newDriver, run } = useTaskDatabases(cluster, 'incsnap', {
    client: { options: SESSION_OPTIONS },
    config: {
      'publication.autocreate.mode': 'filtered',
      'snapshot.mode': 'no_data',
      'table.include.list': 'public[.][tuk]',
      'signal.data.collection': 'public.debezium_signal',
      'incremental.snapshot.chunk.size': '100',
    },
  });

  const ddl = (rows: number) =>
    `${SIGNAL_DDL} CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL);
     INSERT INTO t SELECT g, 0 FROM generate_series(1, ${rows}) g;`;

  it('streams inserts into the signal table though table.include.list leaves it out, as Debezium does', async () => {
    const { db, sql } = await database(ddl(0));
    const driver = await run(db);
    await signal(sql, 'hello-1', 'log', { message: 'hello from the signal table' });
    const delivered = await driver.pollUntil('the signal row', (d) =>
      d.some((r) => r.topic === 'srv.public.debezium_signal'),
    );
    const row = delivered.find((r) => r.topic === 'srv.public.debezium_signal') as SourceRecord;
    expect(envelope(row).op).toBe('c');
    expect(envelope(row).after).toEqual({
      id: 'hello-1',
      type: 'log',
      data: '{"message":"hello from the signal table"}',
    });
    const published = await sql.query(
      "SELECT tablename FROM pg_publication_tables WHERE pubname = 'dbz_publication' ORDER BY 1",
    );
    expect(published.rows.map((r) => r.tablename)).toEqual(['debezium_signal', 't']);
  });

  it('refuses to start when the signal table does not exist, naming it', async () => {
    const { db } = await database('CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)');
    await expect(newDriver().start(config(db))).rejects.toThrow(
      /Signal data collection 'public.debezium_signal' \(signal.data.collection\) was not found/,
    );
  });

  it('reads a table in chunks while updates and deletes stream, and the compacted topic ends equal to the table', async () => {
    const { db, sql } = await database(ddl(3000));
    const driver = await run(db);
    await signal(sql, 'ad-hoc-1', 'execute-snapshot', {
      'data-collections': ['public.t'],
      type: 'incremental',
    });
    // Writers race the chunks: updates, deletes and inserts above the maximum key.
    const writes = (async () => {
      for (let i = 0; i < 300; i++) {
        const id = 1 + ((i * 7919) % 3000);
        if (i % 5 === 0) await sql.query('DELETE FROM t WHERE id = $1', [id]);
        else if (i % 11 === 0) await sql.query('INSERT INTO t VALUES ($1, 1)', [5000 + i]);
        else await sql.query('UPDATE t SET v = v + 1 WHERE id = $1', [id]);
      }
    })();
    let writing = true;
    void writes.finally(() => {
      writing = false;
    });
    await driver.pollUntil(
      'the snapshot to end with the writers done',
      (d) => !writing && snapshotDone(d),
      60_000,
    );
    await writes;
    // A last change of our own marks the end of everything the writers committed.
    await sql.query('INSERT INTO t VALUES (100000, 7)');
    const delivered = await driver.pollUntil('the marker', (d) => compacted(d).has(100000));

    expect(compacted(delivered)).toEqual(await tableContent(sql));
    const reads = delivered.filter((r) => r.topic === TOPIC && isRead(r));
    expect(reads.length).toBeGreaterThan(2000);
    expect(envelope(reads[0]).source.snapshot).toBe('incremental');
    // Chunks go out in key order.
    const ids = reads.map((r) => (r.key as { id: number }).id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('drops the reads of keys changed between a chunk read and its close watermark: the newer change wins', async () => {
    // Each close watermark first updates and deletes rows (a BEFORE trigger): committed
    // after the chunk's SELECT, streamed inside the window, so the reads are older.
    const { db, sql } = await database(`${ddl(1000)}
      CREATE FUNCTION race() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'snapshot-window-close' THEN
          UPDATE t SET v = v + 1 WHERE id % 10 = 0;
          DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id % 10 = 5 ORDER BY id LIMIT 5);
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER race BEFORE INSERT ON debezium_signal FOR EACH ROW EXECUTE FUNCTION race();`);
    const driver = await run(db);
    await signal(sql, 'ad-hoc-race', 'execute-snapshot', { 'data-collections': ['public.t'] });
    const delivered = await driver.pollUntil('the snapshot to end', snapshotDone);

    expect(compacted(delivered)).toEqual(await tableContent(sql));
    const readIds = new Set(
      delivered
        .filter((r) => r.topic === TOPIC && isRead(r))
        .map((r) => (r.key as { id: number }).id),
    );
    expect(readIds.has(10)).toBe(false);
    expect(readIds.has(11)).toBe(true);
  });

  it('a change committed with the watermarks, after a chunk opens, drops that chunk’s read of its key', async () => {
    // A chunk's open watermark goes in one transaction with the previous chunk's close;
    // a trigger on the k-th open updates a row of the k-th chunk (ids 100k-99..100k)
    // right after it, in that transaction: the update must drop the chunk's read.
    const { db, sql } = await database(`${ddl(1000)}
      CREATE TABLE opens (n int NOT NULL); INSERT INTO opens VALUES (0);
      CREATE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE k int;
      BEGIN
        UPDATE opens SET n = n + 1 RETURNING n INTO k;
        UPDATE t SET v = v + 1 WHERE id = k * 100 - 50;
        RETURN NEW;
      END $$;
      CREATE TRIGGER bump AFTER INSERT ON debezium_signal FOR EACH ROW
        WHEN (NEW.type = 'snapshot-window-open') EXECUTE FUNCTION bump();`);
    const driver = await run(db);
    await signal(sql, 'ad-hoc-bump', 'execute-snapshot', { 'data-collections': ['public.t'] });
    const delivered = await driver.pollUntil('the snapshot to end', snapshotDone);

    expect(compacted(delivered)).toEqual(await tableContent(sql));
    const readIds = delivered
      .filter((r) => r.topic === TOPIC && isRead(r))
      .map((r) => (r.key as { id: number }).id);
    expect(readIds.filter((id) => id % 100 === 50)).toEqual([]);
    expect(readIds).toHaveLength(990);
  });

  it('resumes at the last chunk after a crash, from the offsets, and ends equal to the table', async () => {
    const { db, sql } = await database(ddl(2000));
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await signal(sql, 'ad-hoc-2', 'execute-snapshot', { 'data-collections': ['public.t'] });
    await first.pollUntil('five chunks', (d) => d.filter(isRead).length >= 500);
    await first.flushOffsets();
    const stored = await offsets.offset({ server: 'srv' });
    expect(typeof stored?.[COLLECTIONS]).toBe('string');
    // Crash: stop without a last offset flush; a change meanwhile streams after the restart.
    await first.task.stop();
    await sql.query('UPDATE t SET v = 42 WHERE id = 1999');
    await sql.query('DELETE FROM t WHERE id = 1998');

    const second = await run(db, {}, offsets);
    await second.pollUntil('the resumed snapshot to end', snapshotDone, 60_000);
    const all = [...first.delivered, ...second.delivered];

    expect(compacted(all)).toEqual(await tableContent(sql));
    const resumedReads = second.delivered.filter(isRead);
    const firstResumed = (resumedReads[0].key as { id: number }).id;
    expect(firstResumed).toBeGreaterThan(400);
    expect(resumedReads.length).toBeLessThan(2000 - 400);
  });

  it('pause-snapshot holds the next chunk back, resume-snapshot goes on', async () => {
    const { db, sql } = await database(ddl(250));
    const driver = await run(db);
    await sql.query('BEGIN');
    await signal(sql, 'p-1', 'pause-snapshot', {});
    await signal(sql, 'x-1', 'execute-snapshot', { 'data-collections': ['public.t'] });
    await sql.query('COMMIT');
    await sql.query('INSERT INTO t VALUES (1000, 1)');
    await driver.pollUntil('the insert after the signals', (d) => compacted(d).has(1000));
    const watermarks = await sql.query(
      "SELECT count(*)::int AS n FROM debezium_signal WHERE type LIKE 'snapshot-window-%'",
    );
    expect(watermarks.rows[0].n).toBe(0);

    await signal(sql, 'r-1', 'resume-snapshot', {});
    const delivered = await driver.pollUntil('the snapshot to end', snapshotDone);

    expect(compacted(delivered)).toEqual(await tableContent(sql));
  });

  it('stop-snapshot drops the tables it names; additional-conditions filter the rows read', async () => {
    const { db, sql } = await database(
      `${ddl(300)} CREATE TABLE u (id int PRIMARY KEY, v int NOT NULL);
       INSERT INTO u SELECT g, g FROM generate_series(1, 300) g;`,
    );
    const driver = await run(db);
    await sql.query('BEGIN');
    await signal(sql, 'x-2', 'execute-snapshot', {
      'data-collections': ['public.t', 'public.u'],
      'additional-conditions': [{ 'data-collection': 'public.u', filter: 'v % 3 = 0' }],
    });
    await signal(sql, 's-2', 'stop-snapshot', { 'data-collections': ['public.t'] });
    await sql.query('COMMIT');
    const delivered = await driver.pollUntil('the snapshot to end', snapshotDone);

    expect(delivered.filter((r) => r.topic === TOPIC && isRead(r))).toEqual([]);
    const u = compacted(delivered, 'srv.public.u');
    expect([...u.keys()]).toEqual(Array.from({ length: 100 }, (_, i) => 3 * (i + 1)));
  });

  it('skips a table without a key, and reads one keyed by message.key.columns', async () => {
    const { db, sql } = await database(
      `${SIGNAL_DDL} CREATE TABLE k (id int NOT NULL, v int NOT NULL);
       INSERT INTO k SELECT g, g FROM generate_series(1, 150) g;`,
    );
    const keyless = await run(db);
    await sql.query('BEGIN');
    await signal(sql, 'x-3', 'execute-snapshot', { 'data-collections': ['public.k'] });
    await sql.query('INSERT INTO k VALUES (1000, 1)');
    await sql.query('COMMIT');
    await sql.query('INSERT INTO k VALUES (1001, 1)');
    const seen = await keyless.pollUntil('the insert after the signal', (d) =>
      d.some((r) => r.topic === 'srv.public.k' && (envelope(r).after?.id as number) === 1001),
    );
    expect(seen.filter(isRead)).toEqual([]);
    await keyless.task.stop();

    const { db: db2, sql: sql2 } = await database(
      `${SIGNAL_DDL} CREATE TABLE k (id int NOT NULL, v int NOT NULL);
       ALTER TABLE k REPLICA IDENTITY FULL;
       INSERT INTO k SELECT g, g FROM generate_series(1, 150) g;`,
    );
    const keyed = await run(db2, { 'message.key.columns': 'public.k:id' });
    await signal(sql2, 'x-4', 'execute-snapshot', { 'data-collections': ['public.k'] });
    const delivered = await keyed.pollUntil('the snapshot to end', snapshotDone);
    expect(compacted(delivered, 'srv.public.k')).toEqual(await tableContent(sql2, 'k'));
  });

  it('snapshots a table added to table.include.list by itself, incrementally, when the task restarts with the new config', async () => {
    const { db, sql } = await database(
      `${ddl(300)} CREATE TABLE u (id int PRIMARY KEY, v int NOT NULL);
       INSERT INTO u SELECT g, g FROM generate_series(1, 400) g;`,
    );
    const offsets = new InMemoryOffsets();
    const first = await run(db, { 'table.include.list': 'public.t' }, offsets);
    await sql.query('UPDATE t SET v = 1 WHERE id = 1');
    await first.pollUntil('the update', (d) => compacted(d).get(1) === 1);
    await first.flushOffsets();
    await first.task.stop();

    const second = await run(db, { 'table.include.list': 'public[.](t|u)' }, offsets);
    await sql.query('UPDATE u SET v = -1 WHERE id = 400');
    const delivered = await second.pollUntil('the snapshot of u to end', snapshotDone);

    expect(compacted(delivered, 'srv.public.u')).toEqual(await tableContent(sql, 'u'));
    expect(delivered.filter((r) => r.topic === TOPIC && isRead(r))).toEqual([]);
  });

  it('reads signals with skipped.operations=c, as Debezium does, and sends no insert', async () => {
    const { db, sql } = await database(ddl(150));
    const driver = await run(db, { 'skipped.operations': 'c' });
    await signal(sql, 'x-6', 'execute-snapshot', { 'data-collections': ['public.t'] });
    await sql.query('INSERT INTO t VALUES (1000, 1)');
    await sql.query('UPDATE t SET v = 5 WHERE id = 1000');
    const delivered = await driver.pollUntil(
      'the snapshot and the update',
      (d) => snapshotDone(d) && compacted(d).get(1000) === 5,
    );

    expect(delivered.filter((r) => r.value !== null && envelope(r).op === 'c')).toEqual([]);
    expect(compacted(delivered)).toEqual(await tableContent(sql));
  });

  it('writes its watermarks as snapshot-window-open and -close rows of the signal table', async () => {
    const { db, sql } = await database(ddl(150));
    const driver = await run(db);
    await signal(sql, 'x-5', 'execute-snapshot', { 'data-collections': ['public.t'] });
    await driver.pollUntil('the snapshot to end', snapshotDone);
    const rows = await waitFor('both chunks watermarked', async () => {
      const r = await sql.query(
        "SELECT id, type FROM debezium_signal WHERE type LIKE 'snapshot-window-%' ORDER BY type, id",
      );
      return r.rows.length === 4 ? r.rows : undefined;
    });
    expect(rows.map((r) => r.type)).toEqual([
      'snapshot-window-close',
      'snapshot-window-close',
      'snapshot-window-open',
      'snapshot-window-open',
    ]);
    expect(rows.every((r) => /-(open|close)$/.test(r.id))).toBe(true);
  });

  it("insert_delete: a chunk's close deletes its open row, keys changed before it still drop their reads, and no watermark is left", async () => {
    // Each close (the delete of an open row) first updates and deletes rows (a BEFORE
    // DELETE trigger): committed after the chunk's read, streamed inside its window.
    const { db, sql } = await database(`${ddl(1000)}
      CREATE FUNCTION race() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.type = 'snapshot-window-open' THEN
          UPDATE t SET v = v + 1 WHERE id % 10 = 0;
          DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id % 10 = 5 ORDER BY id LIMIT 5);
        END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER race BEFORE DELETE ON debezium_signal FOR EACH ROW EXECUTE FUNCTION race();`);
    const driver = await run(db, { 'incremental.snapshot.watermarking.strategy': 'INSERT_DELETE' });
    await signal(sql, 'ad-hoc-del', 'execute-snapshot', { 'data-collections': ['public.t'] });
    const delivered = await driver.pollUntil('the snapshot to end', snapshotDone);

    expect(compacted(delivered)).toEqual(await tableContent(sql));
    const readIds = new Set(
      delivered
        .filter((r) => r.topic === TOPIC && isRead(r))
        .map((r) => (r.key as { id: number }).id),
    );
    expect(readIds.has(10)).toBe(false);
    expect(readIds.has(11)).toBe(true);
    const left = await sql.query('SELECT id FROM debezium_signal ORDER BY id');
    expect(left.rows.map((r) => r.id)).toEqual(['ad-hoc-del']);
  });

  describe('read.only=true', () => {
    const readOnly = { 'read.only': 'true' };

    it('writes nothing, and the compacted topic ends equal to the table while updates and deletes stream', async () => {
      const { db, sql } = await database(ddl(1500));
      const driver = await run(db, readOnly);
      await signal(sql, 'ro-1', 'execute-snapshot', { 'data-collections': ['public.t'] });
      const writes = (async () => {
        for (let i = 0; i < 200; i++) {
          const id = 1 + ((i * 7919) % 1500);
          if (i % 5 === 0) await sql.query('DELETE FROM t WHERE id = $1', [id]);
          else await sql.query('UPDATE t SET v = v + 1 WHERE id = $1', [id]);
        }
      })();
      let writing = true;
      void writes.finally(() => {
        writing = false;
      });
      await driver.pollUntil('the snapshot to end', (d) => !writing && snapshotDone(d), 60_000);
      await writes;
      await sql.query('INSERT INTO t VALUES (100000, 7)');
      const delivered = await driver.pollUntil('the marker', (d) => compacted(d).has(100000));

      expect(compacted(delivered)).toEqual(await tableContent(sql));
      expect(delivered.filter((r) => r.topic === TOPIC && isRead(r)).length).toBeGreaterThan(1000);
      const signals = await sql.query('SELECT id FROM debezium_signal ORDER BY id');
      expect(signals.rows.map((r) => r.id)).toEqual(['ro-1']);
    });

    it('finishes on a database that writes nothing meanwhile (keepalives release the chunks)', async () => {
      const { db, sql } = await database(ddl(350));
      const driver = await run(db, readOnly);
      await signal(sql, 'ro-idle', 'execute-snapshot', { 'data-collections': ['public.t'] });
      const delivered = await driver.pollUntil('the snapshot to end', (d) =>
        d.some((r) => r.topic === TOPIC && isRead(r) && (r.key as { id: number }).id === 350),
      );
      const ids = delivered
        .filter((r) => r.topic === TOPIC && isRead(r))
        .map((r) => (r.key as { id: number }).id);
      expect(ids).toEqual(Array.from({ length: 350 }, (_, i) => i + 1));
    });

    it("drops the read of a key whose change streamed before the chunk's snapshot could see it (synchronous replication)", async () => {
      // With a synchronous standby that never answers, a commit is flushed (so streamed)
      // but stays invisible: every later chunk snapshot reports it as running, and reads
      // the row as it was before. That read is older than the change that already went out.
      const { db, sql } = await database(ddl(1000));
      await sql.query('SET synchronous_commit TO local');
      const driver = await run(db, readOnly);
      await signal(sql, 'ro-sync', 'execute-snapshot', { 'data-collections': ['public.t'] });
      await signal(sql, 'ro-pause', 'pause-snapshot', {});
      await driver.pollUntil('the pause', (d) =>
        d.some(
          (r) => r.topic === 'srv.public.debezium_signal' && envelope(r).after?.id === 'ro-pause',
        ),
      );
      await sql.query("ALTER SYSTEM SET synchronous_standby_names = 'nobody'");
      await sql.query('SELECT pg_reload_conf()');
      const writer = new pg.Client({ ...cluster().connectionConfig(db), options: SESSION_OPTIONS });
      await writer.connect();
      await writer.query('SET synchronous_commit TO on');
      const pid = (await writer.query('SELECT pg_backend_pid() AS p')).rows[0].p;
      try {
        // Waits for the standby; its commit is in the WAL, and streams.
        const waiting = writer.query('UPDATE t SET v = 99 WHERE id = 950').catch(() => undefined);
        await driver.pollUntil('the invisible commit streamed', (d) =>
          d.some(
            (r) => r.topic === TOPIC && envelope(r).op === 'u' && envelope(r).after?.id === 950,
          ),
        );
        expect((await sql.query('SELECT v FROM t WHERE id = 950')).rows[0].v).toBe(0);
        await signal(sql, 'ro-resume', 'resume-snapshot', {});
        await driver.pollUntil('the chunk of id 950 out', (d) =>
          d.some((r) => r.topic === TOPIC && isRead(r) && (r.key as { id: number }).id >= 951),
        );
        await sql.query('SELECT pg_cancel_backend($1)', [pid]);
        await waiting;
      } finally {
        await sql.query('ALTER SYSTEM RESET synchronous_standby_names');
        await sql.query('SELECT pg_reload_conf()');
        await writer.end().catch(() => undefined);
      }
      await sql.query('INSERT INTO t VALUES (100000, 7)');
      const delivered = await driver.pollUntil('the marker', (d) => compacted(d).has(100000));
      expect((await sql.query('SELECT v FROM t WHERE id = 950')).rows[0].v).toBe(99);
      expect(compacted(delivered)).toEqual(await tableContent(sql));
      expect(compacted(delivered).get(950)).toBe(99);
      const readIds = delivered
        .filter((r) => r.topic === TOPIC && isRead(r))
        .map((r) => (r.key as { id: number }).id);
      expect(readIds).not.toContain(950);
      expect(readIds).toContain(949);
    });
  });

  it('a blocking snapshot pauses the stream at its signal, reads the tables (additional-conditions honoured) with Debezium markers, and then streams every change after the signal', async () => {
    const { db, sql } = await database(`${ddl(300)}
      CREATE TABLE u (id int PRIMARY KEY, v int NOT NULL); INSERT INTO u VALUES (1, 0), (2, 0), (3, 0);`);
    // Two connections: the blocking snapshot exports its own snapshot for the second.
    const driver = await run(db, { 'snapshot.fetch.size': '20', 'snapshot.max.threads': '2' });
    await sql.query('UPDATE t SET v = 1 WHERE id = 1');
    await driver.pollUntil('the change before the signal', (d) => compacted(d).get(1) === 1);
    // The signal, a change in its transaction after it, and one in a transaction of its own.
    await sql.query('BEGIN');
    await signal(sql, 'b-1', 'execute-snapshot', {
      type: 'blocking',
      'data-collections': ['public.t', 'public.u'],
      'additional-conditions': [
        { 'data-collection': 'public.t', filter: 'SELECT * FROM public.t WHERE id > 250' },
        { 'data-collection': 'public.u', filter: 'id <> 2' },
      ],
    });
    await sql.query('UPDATE t SET v = 2 WHERE id = 2');
    await sql.query('COMMIT');
    await sql.query('UPDATE t SET v = 3 WHERE id = 3');
    const delivered = await driver.pollUntil('the change after the snapshot', (d) =>
      d.some((r) => r.value !== null && envelope(r).after?.v === 3),
    );

    const describe = (r: SourceRecord) =>
      `${r.topic.slice(4)} ${envelope(r).op} ${(r.key as { id: string | number }).id}`;
    const fromSignal = delivered.slice(delivered.findIndex(isRead));
    const reads = fromSignal.filter(isRead);
    // Every read before anything the stream had after the signal, the signal's row included.
    expect(fromSignal.slice(52).map(describe)).toEqual([
      'public.debezium_signal c b-1',
      'public.t u 2',
      'public.t u 3',
    ]);
    const readsOf = (table: string) =>
      reads.filter((r) => r.topic === `srv.public.${table}`).map(describe);
    expect(readsOf('t')).toEqual(Array.from({ length: 50 }, (_, i) => `public.t r ${251 + i}`));
    expect(readsOf('u')).toEqual(['public.u r 1', 'public.u r 3']);
    // Debezium's markers, whichever table's rows came first and last.
    const markers = reads.map((r) => envelope(r).source.snapshot);
    expect([markers[0], markers.at(-1)]).toEqual(['first', 'last']);
    expect(markers.slice(1, -1).sort()).toEqual([
      'first_in_data_collection',
      'last_in_data_collection',
      ...Array(48).fill('true'),
    ]);
    // A restart from any read streams the signal again (its lsn_proc is one before).
    const signalRow = fromSignal[52];
    expect(
      reads.every((r) => r.sourceOffset.lsn_commit === signalRow.sourceOffset.lsn_commit),
    ).toBe(true);
    expect(
      reads.every(
        (r) => Number(r.sourceOffset.lsn_proc) === Number(signalRow.sourceOffset.lsn_proc) - 1,
      ),
    ).toBe(true);
    expect(reads.some((r) => 'snapshot' in r.sourceOffset)).toBe(false);
  });

  it('a restart from a read of a blocking snapshot takes the snapshot again, and loses no change', async () => {
    const { db, sql } = await database(ddl(100));
    const offsets = new InMemoryOffsets();
    const first = await run(db, { 'snapshot.fetch.size': '10' }, offsets);
    await signal(sql, 'b-2', 'execute-snapshot', {
      type: 'blocking',
      'data-collections': ['public.t'],
    });
    await sql.query('UPDATE t SET v = 7 WHERE id = 7');
    const before = await first.pollUntil('some reads', (d) => d.filter(isRead).length >= 30);
    // Crash with a read's offset stored.
    await first.flushOffsets(before.filter(isRead)[20]);
    await first.task.stop();
    await sql.query('UPDATE t SET v = 8 WHERE id = 8');

    const second = await run(db, { 'snapshot.fetch.size': '10' }, offsets);
    const again = await second.pollUntil('the change after the restart', (d) =>
      d.some((r) => r.value !== null && envelope(r).op === 'u' && envelope(r).after?.v === 8),
    );
    // Heap order (updated rows moved to the end), every row once.
    const ids = again.filter(isRead).map((r) => (r.key as { id: number }).id);
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(compacted(again)).toEqual(await tableContent(sql));
    expect(again.filter((r) => r.topic === 'srv.public.debezium_signal')).toHaveLength(1);
  });

  it("with provide.transaction.metadata, a restart from a blocking read keeps the signal's transaction's counts", async () => {
    const { db, sql } = await database(ddl(100));
    const offsets = new InMemoryOffsets();
    const settings = { 'snapshot.fetch.size': '10', 'provide.transaction.metadata': 'true' };
    const first = await run(db, settings, offsets);
    // One change before the signal and one after it, in its transaction.
    await sql.query('BEGIN');
    await sql.query('UPDATE t SET v = 5 WHERE id = 5');
    await signal(sql, 'b-3', 'execute-snapshot', {
      type: 'blocking',
      'data-collections': ['public.t'],
    });
    await sql.query('UPDATE t SET v = 6 WHERE id = 6');
    await sql.query('COMMIT');
    const before = await first.pollUntil('some reads', (d) => d.filter(isRead).length >= 30);
    await first.flushOffsets(before.filter(isRead)[20]);
    await first.task.stop();

    const second = await run(db, settings, offsets);
    const isEnd = (r: SourceRecord) =>
      r.topic === 'srv.transaction' && (r.value as { status?: string } | null)?.status === 'END';
    const again = await second.pollUntil("the END of the signal's transaction", (d) =>
      d.some(isEnd),
    );
    const end = again.find(isEnd)?.value as {
      event_count: number;
      data_collections: Array<{ data_collection: string; event_count: number }>;
    };
    expect(end.event_count).toBe(3);
    expect(end.data_collections).toEqual([
      { data_collection: 'public.t', event_count: 2 },
      { data_collection: 'public.debezium_signal', event_count: 1 },
    ]);
  });
});

describe('the kafka and file signal channels (real Postgres, embedded broker)', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  const tmp = createTmpDir('signal-channels-');
  beforeAll(async () => {
    broker = await startTestBroker();
    kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  });
  afterAll(async () => {
    await broker?.stop();
    tmp.remove();
  });

  const { database, config, newDriver } = useTaskDatabases(cluster, 'sigch', {
    client: { options: SESSION_OPTIONS },
    config: {
      'publication.autocreate.mode': 'filtered',
      'snapshot.mode': 'no_data',
      'table.include.list': 'public[.][tu]',
      'signal.data.collection': 'public.debezium_signal',
      'incremental.snapshot.chunk.size': '100',
      'signal.poll.interval.ms': '50',
    },
  });
  const tables = `${SIGNAL_DDL}
    CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL);
    INSERT INTO t SELECT g, g FROM generate_series(1, 250) g;
    CREATE TABLE u (id int PRIMARY KEY, v int NOT NULL);
    INSERT INTO u SELECT g, g FROM generate_series(1, 5) g;`;
  const readsOf = (d: readonly SourceRecord[], topic: string) =>
    d.filter((r) => r.topic === topic && isRead(r));

  async function send(topic: string, messages: Array<{ key: string; value: unknown }>) {
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic,
        messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value) })),
      });
    } finally {
      await producer.disconnect();
    }
  }

  /** A task on `db` reading the kafka channel, with the worker's bootstrap in its context. */
  async function kafkaTask(db: string, offsets: InMemoryOffsets, extra = {}) {
    const driver = newDriver(offsets);
    driver.bootstrapServers = [broker.bootstrap];
    await driver.start(config(db, { 'signal.enabled.channels': 'source,kafka', ...extra }));
    return driver;
  }

  it('runs an execute-snapshot sent to <topic.prefix>-signal keyed topic.prefix, ignores other keys, and a restart does not run it again', async () => {
    const { db, sql } = await database(tables);
    const topic = 'srv-signal';
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const offsets = new InMemoryOffsets();
      const first = await kafkaTask(db, offsets);
      await send(topic, [
        {
          key: 'another-connector',
          value: { type: 'execute-snapshot', data: { 'data-collections': ['public.u'] } },
        },
        {
          key: 'srv',
          value: {
            type: 'execute-snapshot',
            data: { 'data-collections': ['public.t'], type: 'INCREMENTAL' },
          },
        },
      ]);
      const delivered = await first.pollUntil('the snapshot of t', snapshotDone);

      expect(compacted(delivered)).toEqual(await tableContent(sql));
      expect(readsOf(delivered, TOPIC)).toHaveLength(250);
      expect(readsOf(delivered, 'srv.public.u')).toEqual([]);
      // The channel's position travels in the source offsets: both records are behind it.
      expect(delivered[delivered.length - 1].sourceOffset).toMatchObject({
        signal_kafka_topic: topic,
        signal_kafka_offset: 2,
      });
      await first.flushOffsets();
      // ...and goes to the group once the runtime committed it, for the tools to see.
      await waitFor('the group offset', async () => {
        const [committed] = await admin.fetchOffsets({ groupId: 'kafka-signal', topics: [topic] });
        return committed.partitions[0].offset === '2' ? true : undefined;
      });
      await first.task.stop();

      const second = await kafkaTask(db, offsets);
      await send(topic, [
        {
          key: 'srv',
          value: { type: 'execute-snapshot', data: { 'data-collections': ['public.u'] } },
        },
      ]);
      const after = await second.pollUntil('the snapshot of u', snapshotDone);

      expect(readsOf(after, 'srv.public.u')).toHaveLength(5);
      // Had the first signal been read again, t would have been read before u.
      expect(readsOf(after, TOPIC)).toEqual([]);
    } finally {
      await admin.disconnect();
    }
  });

  it('a heartbeat past a kafka execute-snapshot carries the snapshot with the channel position, so a restart still takes it', async () => {
    const { db, sql } = await database(tables);
    const topic = 'srv-signal-beats';
    const offsets = new InMemoryOffsets();
    const settings = { 'heartbeat.interval.ms': '20', 'signal.kafka.topic': topic };
    const admin = kafka.admin();
    await admin.connect();
    await admin
      .createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })
      .finally(() => admin.disconnect());
    const first = await kafkaTask(db, offsets, settings);
    // A change streamed before the signals, so the heartbeats build on its offset.
    await sql.query('UPDATE u SET v = 0 WHERE id = 1');
    await first.pollUntil('the update', (d) => d.some((r) => r.topic === 'srv.public.u'));
    // Paused: no chunk goes out, so heartbeats alone carry offsets past the signals.
    await send(topic, [
      { key: 'srv', value: { type: 'pause-snapshot', data: {} } },
      {
        key: 'srv',
        value: { type: 'execute-snapshot', data: { 'data-collections': ['public.t'] } },
      },
    ]);
    const pastSignals = (r: SourceRecord) =>
      r.topic === '__debezium-heartbeat.srv' && Number(r.sourceOffset.signal_kafka_offset) === 2;
    await first.pollUntil('a heartbeat past the signals', (d) => d.some(pastSignals));
    await first.flushOffsets();
    await first.task.stop();
    const stored = await offsets.offset({ server: 'srv' });
    expect(stored).toMatchObject({ signal_kafka_topic: topic, signal_kafka_offset: 2 });
    expect(String(stored?.[COLLECTIONS])).toContain('public.t');

    // The pause is not kept (as in Debezium); the snapshot is, though its signal is behind.
    const second = await kafkaTask(db, offsets, settings);
    const delivered = await second.pollUntil('the snapshot of t', snapshotDone);
    expect(readsOf(delivered, TOPIC)).toHaveLength(250);
    expect(compacted(delivered)).toEqual(await tableContent(sql));
  });

  it('runs the signals of signal.file, line by line, and empties the file', async () => {
    const { db, sql } = await database(tables);
    const file = join(tmp.path, `${db}.txt`);
    const driver = newDriver();
    await driver.start(config(db, { 'signal.enabled.channels': 'file', 'signal.file': file }));
    // With the source channel off, a signal inserted into the table is not acted on.
    await signal(sql, 'x-7', 'execute-snapshot', { 'data-collections': ['public.t'] });
    await driver.pollUntil('the signal row', (d) =>
      d.some((r) => r.topic === 'srv.public.debezium_signal'),
    );
    await writeFile(
      file,
      [
        'not a signal',
        JSON.stringify({
          id: 'f-1',
          type: 'execute-snapshot',
          data: { 'data-collections': ['public.u'] },
        }),
        '',
      ].join('\n'),
    );
    const delivered = await driver.pollUntil('the snapshot of u', snapshotDone);

    expect(compacted(delivered, 'srv.public.u')).toEqual(await tableContent(sql, 'u'));
    expect(readsOf(delivered, TOPIC)).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe('');
  });
});
