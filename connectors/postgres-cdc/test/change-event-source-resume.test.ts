/**
 * The change source resuming from a record's offset, as the stream runner does after a
 * lost connection and the task after a restart: Postgres sends the unconfirmed
 * transactions again, and a new source given the resume point of any record handed on
 * must hand out exactly the records after it, transaction metadata included (no second
 * BEGIN, the numbering going on, the counts of a change repeated because its last
 * record was not stored).
 */
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { ChangeEventSource, type ResumePoint, resumePointOf } from '../src/change-event-source.ts';
import type { Lsn } from '../src/lsn.ts';
import type { PgoutputMessage } from '../src/pgoutput-decoder.ts';
import { ensurePublication } from '../src/publication.ts';
import { createSlotExportingSnapshot, dropSlot } from '../src/replication-slot.ts';
import { ReplicationStream } from '../src/replication-stream.ts';
import { TableFilter } from '../src/table-filter.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { TypeRegistry } from '../src/type-registry.ts';
import { waitFor } from './support.ts';

const cluster = usePostgres();

/**
 * Resumes after each record of `whole` in turn and expects the rest of the stream. A
 * record that is not the last of its change (lsn_proc = LSN - 1) leaves the change
 * owed: all of its records come again, numbered as the first time.
 */
async function expectEveryCutResumes(
  whole: SourceRecord[],
  resume: (from: ResumePoint | null) => Promise<SourceRecord[]>,
): Promise<void> {
  for (let i = 0; i < whole.length; i++) {
    const cut = whole[i] as SourceRecord;
    const resumed = await resume(resumePointOf(cut.sourceOffset));
    const o = cut.sourceOffset;
    const owed = cut.topic !== 'srv.transaction' && o.lsn_proc === (o.lsn as number) - 1;
    const from = owed
      ? whole.findIndex((r) => r.topic !== 'srv.transaction' && r.sourceOffset.lsn === o.lsn)
      : i + 1;
    expect({ after: i, records: resumed }).toEqual({ after: i, records: whole.slice(from) });
  }
}

describe('change source resuming inside a transaction (real Postgres)', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  /** Every message of the database's stream until `commits` Commits, with its WAL position. */
  async function messagesOf(
    connection: pg.ClientConfig,
    slot: string,
    startLsn: Lsn,
    commits: number,
    messages = false,
  ): Promise<Array<{ m: PgoutputMessage; lsn: Lsn }>> {
    const got: Array<{ m: PgoutputMessage; lsn: Lsn }> = [];
    const stream = new ReplicationStream({
      connection: { ...connection, options: SESSION_OPTIONS },
      slotName: slot,
      publicationNames: ['dbz_publication'],
      startLsn,
      statusIntervalMs: 10_000,
      messages,
      // Never confirms: every session of the test reads the same WAL.
      canConfirmIdle: () => false,
      onMessage: (m, lsn) => got.push({ m, lsn }),
    });
    const { done } = await stream.start();
    done.catch(() => undefined);
    try {
      await waitFor('the transactions', async () =>
        got.filter((x) => x.m.tag === 'commit').length >= commits ? true : undefined,
      );
    } finally {
      await stream.stop();
    }
    return got;
  }

  /** A new change source fed `messages` from `resumeAfter`: what it hands out. */
  async function session(
    catalog: pg.Client,
    registry: TypeRegistry,
    messages: Array<{ m: PgoutputMessage; lsn: Lsn }>,
    resumeAfter: ResumePoint | null,
  ): Promise<SourceRecord[]> {
    const out: SourceRecord[] = [];
    let commits = 0;
    let failure: unknown = null;
    const source = new ChangeEventSource({
      context: {
        serverName: 'srv',
        database: String(catalog.database),
        tombstonesOnDelete: true,
        provideTransactionMetadata: true,
        sourcePartition: { server: 'srv' },
        nowMs: () => 1_700_000_000_000,
      },
      catalog,
      registry,
      modes: { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' },
      filter: TableFilter.everything(),
      topicPrefix: 'srv',
      skippedOperations: new Set(),
      resumeAfter,
      emit: (r) => out.push(...r),
      onCommit: () => commits++,
      onError: (e) => {
        failure = e;
      },
    });
    for (const { m, lsn } of messages) source.accept(m, lsn);
    // A non-transactional logical decoding message goes to onCommit too.
    const total = messages.filter(
      (x) => x.m.tag === 'commit' || (x.m.tag === 'message' && !x.m.transactional),
    ).length;
    // Relation messages are applied asynchronously; the rest waits behind them.
    await waitFor('every Commit handled', async () => {
      if (failure) throw failure;
      return commits >= total ? true : undefined;
    });
    return out;
  }

  it('hands out exactly the records after any record whose offset it resumes from', async () => {
    const db = await cluster().freshDatabase('resume');
    const connection = cluster().connectionConfig(db);
    const catalog = await cluster().client(db);
    cleanups.push(() => catalog.end());
    await catalog.query(
      "CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id int PRIMARY KEY); INSERT INTO a VALUES (1, 'x'), (2, 'y')",
    );
    await ensurePublication(catalog, 'dbz_publication', 'filtered', [
      { schema: 'public', table: 'a' },
      { schema: 'public', table: 'b' },
    ]);
    const snap = await createSlotExportingSnapshot(connection, db);
    await snap.release();
    cleanups.push(() => dropSlot(catalog, db));
    // Deletes (with tombstones) and a key change (delete, tombstone, create) make
    // changes of several records.
    await catalog.query(`BEGIN; INSERT INTO b VALUES (1); DELETE FROM a WHERE id = 1;
      UPDATE a SET id = 3 WHERE id = 2; INSERT INTO b VALUES (2); INSERT INTO a VALUES (4, 'z'); COMMIT`);
    await catalog.query('BEGIN; INSERT INTO b VALUES (3); DELETE FROM b WHERE id = 1; COMMIT');
    const messages = await messagesOf(connection, db, snap.consistentPoint, 2);
    const registry = new TypeRegistry(catalog);
    await registry.load();

    const whole = await session(catalog, registry, messages, null);
    const shape = (r: SourceRecord) =>
      r.topic === 'srv.transaction'
        ? (r.value as { status: string }).status
        : `${r.topic.slice(11)} ${(r.value as { op: string } | null)?.op ?? 'tombstone'}`;
    expect(whole.map(shape)).toEqual([
      'BEGIN',
      'b c',
      'a d',
      'a tombstone',
      'a d',
      'a tombstone',
      'a c',
      'b c',
      'a c',
      'END',
      'BEGIN',
      'b c',
      'b d',
      'b tombstone',
      'END',
    ]);
    await expectEveryCutResumes(whole, (from) => session(catalog, registry, messages, from));
  });

  it('hands out exactly the records after any record whose offset it resumes from, logical decoding messages among them', async () => {
    const db = await cluster().freshDatabase('resumemsg');
    const connection = cluster().connectionConfig(db);
    const catalog = await cluster().client(db);
    cleanups.push(() => catalog.end());
    await catalog.query('CREATE TABLE a (id int PRIMARY KEY)');
    await ensurePublication(catalog, 'dbz_publication', 'filtered', [
      { schema: 'public', table: 'a' },
    ]);
    const snap = await createSlotExportingSnapshot(connection, db);
    await snap.release();
    cleanups.push(() => dropSlot(catalog, db));
    // Non-transactional messages before, between and (written inside the second, right
    // before its Commit) just ahead of transactions; a transactional one among changes.
    await catalog.query("SELECT pg_logical_emit_message(false, 'm', 'one')");
    await catalog.query(`BEGIN; INSERT INTO a VALUES (1);
      SELECT pg_logical_emit_message(true, 'm', 'two'); DELETE FROM a WHERE id = 1; COMMIT`);
    await catalog.query(`BEGIN; INSERT INTO a VALUES (2);
      SELECT pg_logical_emit_message(false, 'm', 'three'); COMMIT`);
    await catalog.query("SELECT pg_logical_emit_message(false, 'm', 'four')");
    await catalog.query('INSERT INTO a VALUES (3)');
    const messages = await messagesOf(connection, db, snap.consistentPoint, 3, true);
    const registry = new TypeRegistry(catalog);
    await registry.load();

    const whole = await session(catalog, registry, messages, null);
    const shape = (r: SourceRecord) => {
      if (r.topic === 'srv.transaction') return (r.value as { status: string }).status;
      const v = r.value as { op: string; message?: { content: Buffer } } | null;
      return v?.message ? `m ${v.message.content}` : `a ${v?.op ?? 'tombstone'}`;
    };
    expect(whole.map(shape)).toEqual([
      'm one',
      'BEGIN',
      'a c',
      'm two',
      'a d',
      'a tombstone',
      'END',
      'm three',
      'BEGIN',
      'a c',
      'END',
      'm four',
      'BEGIN',
      'a c',
      'END',
    ]);
    await expectEveryCutResumes(whole, (from) => session(catalog, registry, messages, from));
  });
});
