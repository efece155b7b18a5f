/**
 * The initial snapshot: every captured table read inside the slot's exported
 * snapshot, so the rows seen are exactly those committed before the slot's consistent
 * point and streaming from that point continues with no gap and no overlap.
 *
 * One REPEATABLE READ, READ ONLY transaction imports the snapshot (SET TRANSACTION
 * SNAPSHOT) and streams each table with `COPY (SELECT <captured columns> FROM t) TO
 * STDOUT` in text format: the same text pgoutput sends, so one set of parsers serves
 * both (copy-text-parser.ts undoes COPY's escaping). COPY sends rows as bare CopyData
 * messages, parsed in bulk; the cursor FETCHed through pg that it replaced paid a round
 * trip per chunk and a result row object per row. Records are op `r` with
 * source.snapshot "true", and "last" on the very last row (one chunk is held back to
 * know which that is). They are handed to `emit` in chunks of `snapshot.fetch.size`
 * rows, per table. Progress per table after each chunk: rows done and the planner's
 * estimate (pg_class.reltuples).
 *
 * The snapshot.* keys (SnapshotReadSettings): snapshot.delay.ms waits before the
 * snapshot connects (the exported snapshot stays valid meanwhile: its replication
 * connection is open); snapshot.include.collection.list picks which captured tables are
 * read; snapshot.locking.mode=shared takes ACCESS SHARE locks on them within
 * snapshot.lock.timeout.ms (none, the default as in Debezium, takes none); a table of
 * snapshot.select.statement.overrides is read through its own SELECT, wrapped so that
 * its columns are picked by name: `COPY (SELECT <captured columns, NULL for those the
 * query does not return> FROM (<query>) AS s) TO STDOUT`.
 *
 * Offsets: { lsn: consistent point, txId, ts_usec, snapshot: true,
 * last_snapshot_record: true on the last row }. Crash behaviour: a snapshot is not
 * resumed mid-way; an offset with `snapshot: true` and no `last_snapshot_record` means
 * "interrupted", and the task drops the slot and snapshots again from scratch, as
 * Debezium does. Reading is paced by the caller: each chunk's `emit` is awaited, and
 * meanwhile the COPY is not read, so TCP holds Postgres back.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import type { SnapshotReadSettings } from './connector-config.ts';
import { CopyTextParser } from './copy-text-parser.ts';
import { type ChangePosition, type EventContext, readRecordMaker } from './event-builder.ts';
import type { Lsn } from './lsn.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import {
  buildTableSchema,
  capturedColumnsOnly,
  readCatalogColumns,
  type TableSchema,
} from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import type { MappingModes } from './type-mapping.ts';
import type { TypeRegistry } from './type-registry.ts';

export interface SnapshotProgress {
  table: TableId;
  rowsDone: number;
  rowsEstimated: number;
}

export interface SnapshotOptions {
  connection: pg.ClientConfig;
  snapshotName: string;
  consistentPoint: Lsn;
  tables: TableId[];
  fetchSize: number;
  context: EventContext;
  registry: TypeRegistry;
  modes: MappingModes;
  filter: TableFilter;
  topicPrefix: string;
  emit(records: SourceRecord[]): Promise<void> | void;
  onProgress?(p: SnapshotProgress): void;
  /** A table copied whole (after its last onProgress; an empty table has none). */
  onTableDone?(table: TableId): void;
  /** Sees each table's schema before any of its rows is emitted. */
  onTable?(table: TableSchema): void;
  nowMicros(): number;
  /** The snapshot.* keys; Debezium's defaults (no delay, no locks, whole tables) when absent. */
  settings?: SnapshotReadSettings;
  /** Whether the task stops: ends the wait of snapshot.delay.ms early. */
  stopping?(): boolean;
}

const DEFAULTS: SnapshotReadSettings = {
  include: [],
  selectOverrides: new Map(),
  locking: 'none',
  lockTimeoutMs: 10_000,
  delayMs: 0,
};

/** How often the wait of snapshot.delay.ms looks whether the task stops. */
const DELAY_STEP_MS = 100;

/** The captured tables snapshot.include.collection.list selects (all of them when empty). */
export function tablesToSnapshot(
  tables: readonly TableId[],
  include: readonly string[],
): TableId[] {
  if (include.length === 0) return [...tables];
  const patterns = include.map((p) => new RegExp(`^(?:${p})$`, 'i'));
  return tables.filter((t) => patterns.some((p) => p.test(`${t.schema}.${t.table}`)));
}

/** Keep every column as the text Postgres sent. */
const textTypes = {
  getTypeParser: () => (value: string) => value,
} as unknown as pg.CustomTypesConfig;

export async function readSnapshot(o: SnapshotOptions): Promise<{ rows: number }> {
  const settings = o.settings ?? DEFAULTS;
  for (let waited = 0; waited < settings.delayMs && !o.stopping?.(); waited += DELAY_STEP_MS)
    await new Promise((r) => setTimeout(r, Math.min(DELAY_STEP_MS, settings.delayMs - waited)));
  if (o.stopping?.()) return { rows: 0 };
  const tables = tablesToSnapshot(o.tables, settings.include);
  const client = new pg.Client({ ...o.connection, options: SESSION_OPTIONS, types: textTypes });
  client.on('error', () => undefined);
  await client.connect();
  let total = 0;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET TRANSACTION SNAPSHOT ${client.escapeLiteral(o.snapshotName)}`);
    // Catalog lookups see the current catalog, not the exported snapshot: a concurrent
    // ALTER TABLE could drop a column between describing a table and reading it
    // ("column does not exist"). ACCESS SHARE (snapshot.locking.mode=shared) lets writes
    // go on and makes DDL on the captured tables wait for the snapshot; the stream then
    // follows it through Relation messages. Without locks (none, Debezium's default) such
    // a DDL can fail the snapshot (and the task); a restart takes the snapshot again.
    if (settings.locking === 'shared' && tables.length > 0) {
      const names = tables
        .map((t) => `${client.escapeIdentifier(t.schema)}.${client.escapeIdentifier(t.table)}`)
        .join(', ');
      await client.query(`SET LOCAL lock_timeout = ${Math.trunc(settings.lockTimeoutMs)}`);
      await client.query(`LOCK TABLE ${names} IN ACCESS SHARE MODE`);
    }
    const txId = Number(
      (await client.query('SELECT txid_current_if_assigned() AS x, pg_backend_pid() AS p')).rows[0]
        .x ?? 0,
    );
    const startedMicros = o.nowMicros();
    // The same for every row: where a snapshot record sits.
    const position: ChangePosition = {
      commitTimeMicros: startedMicros,
      snapshot: 'true',
      txId,
      lsn: o.consistentPoint,
      lastCommitLsn: null,
    };
    // Shared by every record but the very last, which HoldBackOne gives its own.
    const offset = {
      lsn: o.consistentPoint,
      txId,
      ts_usec: startedMicros,
      snapshot: true,
      last_snapshot_record: false,
    };
    const out = new HoldBackOne(o.emit);
    for (const id of tables) {
      const table = await describeTable(client, id, o);
      o.onTable?.(table);
      const estimated = Number(
        (
          await client.query('SELECT reltuples::bigint AS n FROM pg_class WHERE oid = $1', [
            table.relationOid,
          ])
        ).rows[0].n,
      );
      const read = readRecordMaker(o.context, capturedColumnsOnly(table), position, offset);
      const override = settings.selectOverrides.get(`${id.schema}.${id.table}`);
      let columns = table.columns.map((c) => client.escapeIdentifier(c.name)).join(', ');
      let from = `${client.escapeIdentifier(id.schema)}.${client.escapeIdentifier(id.table)}`;
      if (override !== undefined) {
        from = `(${override}) AS dbz_override`;
        const returned = new Set(
          (await client.query(`SELECT * FROM ${from} LIMIT 0`)).fields.map((f) => f.name),
        );
        columns = table.columns
          .map((c) => (returned.has(c.name) ? client.escapeIdentifier(c.name) : 'NULL'))
          .join(', ');
      }
      // A table with no captured column still has rows to report: select one NULL.
      const parser = new CopyTextParser(Math.max(1, table.columns.length));
      const copy = client.query(
        copyTo(`COPY (SELECT ${columns || 'NULL'} FROM ${from}) TO STDOUT`),
      );
      let chunk: SourceRecord[] = [];
      let rowsInChunk = 0;
      let done = 0;
      const flush = async () => {
        done += rowsInChunk;
        total += rowsInChunk;
        await out.push(chunk);
        chunk = [];
        rowsInChunk = 0;
        o.onProgress?.({ table: id, rowsDone: done, rowsEstimated: Math.max(estimated, done) });
      };
      // Async iteration reads the stream in paused mode: while a chunk's emit is
      // pending nothing is pulled, the stream's buffer fills, pg-copy-streams stops
      // reading the socket and TCP holds the server back.
      for await (const data of copy as AsyncIterable<Buffer>) {
        parser.push(data);
        for (let row = parser.nextRow(); row !== null; row = parser.nextRow()) {
          chunk.push(read(row));
          if (++rowsInChunk === o.fetchSize) await flush();
        }
      }
      parser.end();
      if (rowsInChunk > 0) await flush();
      o.onTableDone?.(id);
    }
    await out.finish();
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
  return { rows: total };
}

/**
 * Hands chunks on one behind, so that the very last record of the snapshot can be
 * marked (source.snapshot "last", offset last_snapshot_record) before it leaves.
 */
class HoldBackOne {
  private held: SourceRecord[] | null = null;

  constructor(private readonly emit: SnapshotOptions['emit']) {}

  async push(chunk: SourceRecord[]): Promise<void> {
    if (this.held) await this.emit(this.held);
    this.held = chunk;
  }

  async finish(): Promise<void> {
    const held = this.held;
    this.held = null;
    if (!held || held.length === 0) return;
    const last = held[held.length - 1];
    const value = last.value as { source: Record<string, unknown> };
    held[held.length - 1] = {
      ...last,
      value: { ...value, source: { ...value.source, snapshot: 'last' } },
      sourceOffset: { ...last.sourceOffset, last_snapshot_record: true },
    };
    await this.emit(held);
  }
}

/** A table's schema from the catalog, as the stream's Relation message would give it. */
export async function describeTable(
  client: pg.Client,
  id: TableId,
  o: Pick<SnapshotOptions, 'topicPrefix' | 'registry' | 'modes' | 'filter'>,
): Promise<TableSchema> {
  const rel = await client.query(
    `SELECT c.oid::int AS oid, c.relreplident AS ident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`,
    [id.schema, id.table],
  );
  if (rel.rows.length === 0) throw new Error(`Table ${id.schema}.${id.table} does not exist`);
  const oid = Number(rel.rows[0].oid);
  // isKey as pgoutput's Relation message sets it: the replica identity index's columns
  // (REPLICA IDENTITY USING INDEX keys a table without a primary key, table-schema.ts).
  const cols = await client.query(
    `SELECT a.attname, a.atttypid::int AS typ, a.atttypmod AS mod,
            EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisreplident
                       AND a.attnum = ANY(i.indkey)) AS ident
       FROM pg_attribute a
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [oid],
  );
  for (const c of cols.rows) await o.registry.resolve(Number(c.typ));
  const identity =
    ({ d: 'default', n: 'nothing', f: 'full', i: 'index' } as const)[rel.rows[0].ident as 'd'] ??
    'default';
  return buildTableSchema({
    topicPrefix: o.topicPrefix,
    id,
    relationOid: oid,
    replicaIdentity: identity,
    columns: cols.rows.map((c) => ({
      name: c.attname,
      typeOid: Number(c.typ),
      typeMod: Number(c.mod),
      // The snapshot's client parses no types: booleans come as 't' / 'f'.
      isKey: c.ident === true || c.ident === 't',
    })),
    catalog: await readCatalogColumns(client, oid),
    registry: o.registry,
    modes: o.modes,
    filter: o.filter,
  });
}
