import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { parseLsn } from '../src/lsn.ts';
import { UNCHANGED_TOAST } from '../src/pgoutput-decoder.ts';
import { ensurePublication } from '../src/publication.ts';
import {
  checkResume,
  createSlotExportingSnapshot,
  dropSlot,
  readSlot,
} from '../src/replication-slot.ts';
import { type Collected, collect, waitFor } from './support.ts';

const cluster = usePostgres();

describe('replication stream (pgoutput, real Postgres)', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups.length = 0;
  });

  async function setUp(
    ddl: string,
    tables: string[],
  ): Promise<{ db: string; sql: pg.Client; slot: string }> {
    const db = await cluster().freshDatabase('stream');
    const sql = await cluster().client(db);
    cleanups.push(() => sql.end());
    await sql.query(ddl);
    await ensurePublication(
      sql,
      'dbz_publication',
      'filtered',
      tables.map((t) => ({ schema: 'public', table: t })),
    );
    cleanups.push(() => dropSlot(sql, db));
    return { db, sql, slot: db };
  }

  async function stream(
    db: string,
    slot: string,
    startLsn: number,
    messages = false,
  ): Promise<Collected> {
    const c = await collect(
      cluster().connectionConfig(db),
      slot,
      'dbz_publication',
      startLsn,
      messages,
    );
    cleanups.push(() => c.stop());
    return c;
  }

  it('decodes begin, relation, insert, update, delete, truncate, message and commit in WAL order', async () => {
    const { db, sql, slot } = await setUp(
      // EXTERNAL storage: large values go out of line uncompressed, so they are TOASTed.
      'CREATE TABLE t (id int PRIMARY KEY, name text, big text); ALTER TABLE t ALTER big SET STORAGE EXTERNAL',
      ['t'],
    );
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    const c = await stream(db, slot, snap.consistentPoint, true);
    await sql.query("INSERT INTO t VALUES (1, 'one', repeat('x', 100000)), (2, NULL, 'small')");
    await sql.query("UPDATE t SET name = 'uno' WHERE id = 1");
    await sql.query('UPDATE t SET id = 3 WHERE id = 2');
    await sql.query('BEGIN');
    await sql.query('DELETE FROM t WHERE id = 3');
    await sql.query("SELECT pg_logical_emit_message(true, 'audit', 'who did it')");
    await sql.query('COMMIT');
    await sql.query('TRUNCATE t');
    const received = await c.commits(5);
    // pgoutput describes a table again whenever its relation cache entry is invalidated
    // (TRUNCATE always does; autovacuum statistics may at any time), so Relation
    // messages may repeat: each change must come after one, and the rest of the
    // stream is compared without them.
    const firstRelation = received.findIndex((m) => m.tag === 'relation');
    expect(firstRelation).toBeGreaterThanOrEqual(0);
    expect(firstRelation).toBeLessThan(received.findIndex((m) => m.tag === 'insert'));
    const truncateAt = received.findIndex((m) => m.tag === 'truncate');
    const truncateBegin = received.map((m) => m.tag).lastIndexOf('begin', truncateAt);
    expect(received.slice(truncateBegin, truncateAt).map((m) => m.tag)).toContain('relation');
    const relation = received[firstRelation]!;
    const all = received.filter((m) => m.tag !== 'relation');
    expect(all.map((m) => m.tag)).toEqual([
      'begin',
      'insert',
      'insert',
      'commit',
      'begin',
      'update',
      'commit',
      'begin',
      'update',
      'commit',
      'begin',
      'delete',
      'message',
      'commit',
      'begin',
      'truncate',
      'commit',
    ]);
    expect(relation).toMatchObject({
      tag: 'relation',
      schema: 'public',
      name: 't',
      replicaIdentity: 'default',
      columns: [
        { name: 'id', typeOid: 23, isKey: true },
        { name: 'name', typeOid: 25, isKey: false },
        { name: 'big', typeOid: 25, isKey: false },
      ],
    });
    expect(all[1]).toMatchObject({ tag: 'insert', after: ['1', 'one', 'x'.repeat(100000)] });
    expect(all[2]).toMatchObject({ tag: 'insert', after: ['2', null, 'small'] });
    // The big value was TOASTed and not changed: Postgres leaves it out.
    expect(all[5]).toMatchObject({
      tag: 'update',
      before: null,
      after: ['1', 'uno', UNCHANGED_TOAST],
    });
    // A key change carries the old key.
    expect(all[8]).toMatchObject({
      tag: 'update',
      beforeIsKeyOnly: true,
      before: ['2', null, null],
      after: ['3', null, 'small'],
    });
    expect(all[11]).toMatchObject({
      tag: 'delete',
      beforeIsKeyOnly: true,
      before: ['3', null, null],
    });
    const message = all[12];
    expect(message.tag === 'message' && message.content.toString()).toBe('who did it');
    expect(all[15]).toMatchObject({
      tag: 'truncate',
      relationOids: [(relation as { relationOid: number }).relationOid],
    });
    const begin = all[0];
    const commit = all[3];
    if (begin.tag !== 'begin' || commit.tag !== 'commit') throw new Error('unexpected');
    expect(commit.commitLsn).toBe(begin.finalLsn);
    expect(commit.endLsn).toBeGreaterThan(commit.commitLsn);
    expect(Math.abs(commit.commitTimeMicros / 1000 - Date.now())).toBeLessThan(600_000);
  });

  it('sends old tuples under REPLICA IDENTITY FULL', async () => {
    const { db, sql, slot } = await setUp(
      "CREATE TABLE f (id int, v text); ALTER TABLE f REPLICA IDENTITY FULL; INSERT INTO f VALUES (1, 'a')",
      ['f'],
    );
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    const c = await stream(db, slot, snap.consistentPoint);
    await sql.query("UPDATE f SET v = 'b'");
    await sql.query('DELETE FROM f');
    const all = await c.commits(2);
    expect(all.find((m) => m.tag === 'relation')).toMatchObject({ replicaIdentity: 'full' });
    expect(all.find((m) => m.tag === 'update')).toMatchObject({
      beforeIsKeyOnly: false,
      before: ['1', 'a'],
      after: ['1', 'b'],
    });
    expect(all.find((m) => m.tag === 'delete')).toMatchObject({
      beforeIsKeyOnly: false,
      before: ['1', 'b'],
    });
  });

  it('moves the slot confirmed position only when confirmed, to the commit end LSN', async () => {
    const { db, sql, slot } = await setUp('CREATE TABLE t (id int PRIMARY KEY)', ['t']);
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    const c = await stream(db, slot, snap.consistentPoint);
    await sql.query('INSERT INTO t VALUES (1)');
    const all = await c.commits(1);
    const commit = all.find((m) => m.tag === 'commit');
    if (commit?.tag !== 'commit') throw new Error('no commit');
    // Not confirmed yet: the slot still sits at its consistent point.
    expect((await readSlot(sql, slot))?.confirmedFlushLsn).toBe(snap.consistentPoint);
    c.stream.confirm(commit.endLsn);
    await waitFor('confirmed_flush_lsn at the commit end', async () =>
      (await readSlot(sql, slot))?.confirmedFlushLsn === commit.endLsn ? true : undefined,
    );
    // Restarting after the confirmation does not send that transaction again.
    await c.stop();
    await sql.query('INSERT INTO t VALUES (2)');
    const again = await stream(db, slot, snap.consistentPoint);
    const next = await again.commits(1);
    expect(next.filter((m) => m.tag === 'insert')).toMatchObject([{ after: ['2'] }]);
  });

  it('confirms the server position on keepalives while the captured table is idle and others are busy', async () => {
    const { db, sql, slot } = await setUp(
      'CREATE TABLE captured (id int PRIMARY KEY); CREATE TABLE busy (id int)',
      ['captured'],
    );
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    const c = await stream(db, slot, snap.consistentPoint);
    for (let i = 0; i < 5; i++) await sql.query('INSERT INTO busy SELECT generate_series(1, 1000)');
    const walNow = await currentWalLsn(sql);
    const confirmed = await waitFor('slot confirmed position past the busy writes', async () => {
      const s = await readSlot(sql, slot);
      return s?.confirmedFlushLsn && s.confirmedFlushLsn >= walNow
        ? s.confirmedFlushLsn
        : undefined;
    });
    expect(confirmed).toBeGreaterThan(snap.consistentPoint);
    expect(c.messages).toEqual([]);
  });

  it('does not confirm past a commit that is still in flight', async () => {
    const { db, sql, slot } = await setUp(
      'CREATE TABLE captured (id int PRIMARY KEY); CREATE TABLE busy (id int)',
      ['captured'],
    );
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    const c = await stream(db, slot, snap.consistentPoint);
    await sql.query('INSERT INTO captured VALUES (1)');
    await c.commits(1);
    for (let i = 0; i < 3; i++) await sql.query('INSERT INTO busy SELECT generate_series(1, 1000)');
    // Wait until the server has told us of a position past the busy writes, then check.
    const walNow = await currentWalLsn(sql);
    await waitFor('a keepalive past the busy writes', async () =>
      c.stream.serverWalEnd >= walNow ? true : undefined,
    );
    expect((await readSlot(sql, slot))?.confirmedFlushLsn).toBe(snap.consistentPoint);
  });

  it('refuses to resume from a dropped slot and names the fix', async () => {
    const { db, sql, slot } = await setUp('CREATE TABLE t (id int PRIMARY KEY)', ['t']);
    const snap = await createSlotExportingSnapshot(cluster().connectionConfig(db), slot);
    await snap.release();
    expect(checkResume(await readSlot(sql, slot), slot, db, snap.consistentPoint)).toEqual({
      resumeFrom: snap.consistentPoint,
    });
    await dropSlot(sql, slot);
    const check = checkResume(await readSlot(sql, slot), slot, db, snap.consistentPoint);
    expect('error' in check && check.error.kind).toBe('slot-missing');
    expect('error' in check && check.error.message).toMatch(/snapshot.mode=when_needed/);
  });
});

async function currentWalLsn(sql: pg.Client): Promise<number> {
  return parseLsn((await sql.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn);
}
