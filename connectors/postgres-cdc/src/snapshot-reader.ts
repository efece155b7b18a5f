/**
 * The initial snapshot: every captured table read inside the slot's exported
 * snapshot, so the rows seen are exactly those committed before the slot's consistent
 * point and streaming from that point continues with no gap and no overlap. The
 * blocking snapshot (blocking-snapshot.ts) reads through here too, in a snapshot of
 * its own (`snapshotName` null) while the stream waits.
 *
 * A REPEATABLE READ, READ ONLY transaction imports the snapshot (SET TRANSACTION
 * SNAPSHOT) and streams each table with `COPY (SELECT <captured columns> FROM t) TO
 * STDOUT` in text format: the same text pgoutput sends, so one set of parsers serves
 * both (copy-text-parser.ts undoes COPY's escaping). COPY sends rows as bare CopyData
 * messages, parsed in bulk; the cursor FETCHed through pg that it replaced paid a round
 * trip per chunk and a result row object per row. Records are handed to `emit` in
 * chunks of `snapshot.fetch.size` rows, per table. Progress per table after each
 * chunk: rows done and the planner's estimate (pg_class.reltuples).
 *
 * snapshot.max.threads=N (Debezium's default 1): N connections, each its own
 * transaction importing the same snapshot, take the tables one at a time from a shared
 * list, so every table is read whole by one connection and its rows keep their order;
 * chunks of different tables interleave. Without an exported snapshot (a blocking
 * snapshot) the first transaction exports one (pg_export_snapshot) for the others.
 * Only Postgres' side runs in parallel: the COPYs of N backends; parsing and events
 * stay on this event loop.
 *
 * source.snapshot, as Debezium marks it: "first" on the first record handed on,
 * "last" on the very last, "first_in_data_collection" / "last_in_data_collection" on
 * the first and last row of every other table, "true" on the rest (a one-row table's
 * row is last_in_data_collection). The table's last chunk is held back until its COPY
 * ends, and the snapshot's last chunk until every table is done, to know which rows
 * those are. Chunks reach `emit` one at a time, in the order they were read.
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
 * last_snapshot_record: true on the last row }, or `offset` as given (a blocking
 * snapshot's). Crash behaviour: a snapshot is not resumed mid-way; an offset with
 * `snapshot: true` and no `last_snapshot_record` means "interrupted", and the task
 * drops the slot and snapshots again from scratch, as Debezium does. Reading is paced
 * by the caller: each chunk's `emit` is awaited, and meanwhile the COPYs are not read,
 * so TCP holds Postgres back. A failed table ends the other connections' COPYs too.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { SourceOffset, SourceRecord } from '../../../src/connect/api/index.ts';
import type { SnapshotReadSettings } from './connector-config.ts';
import { CopyTextParser } from './copy-text-parser.ts';
import {
  type ChangePosition,
  type EventContext,
  readRecordMaker,
  type SnapshotMarker,
} from './event-builder.ts';
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
  /** The snapshot to read in; null for one of its own (a blocking snapshot). */
  snapshotName: string | null;
  /** source.lsn of every record (and the offset's lsn unless `offset` is given). */
  consistentPoint: Lsn;
  /** The offset of every record (a blocking snapshot's); the initial snapshot's when absent. */
  offset?: SourceOffset;
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
  maxThreads: 1,
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
  // More connections than tables would only sit idle in their transactions.
  const threads = Math.max(1, Math.min(settings.maxThreads ?? 1, tables.length));
  const clients: pg.Client[] = [];
  try {
    const main = await snapshotClient(o.connection, clients);
    await main.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    let snapshotName = o.snapshotName;
    if (snapshotName !== null)
      await main.query(`SET TRANSACTION SNAPSHOT ${main.escapeLiteral(snapshotName)}`);
    else if (threads > 1)
      snapshotName = String((await main.query('SELECT pg_export_snapshot() AS s')).rows[0].s);
    // Catalog lookups see the current catalog, not the exported snapshot: a concurrent
    // ALTER TABLE could drop a column between describing a table and reading it
    // ("column does not exist"). ACCESS SHARE (snapshot.locking.mode=shared) lets writes
    // go on and makes DDL on the captured tables wait for the snapshot; the stream then
    // follows it through Relation messages. Without locks (none, Debezium's default) such
    // a DDL can fail the snapshot (and the task); a restart takes the snapshot again.
    // The first transaction holds them until every connection is done.
    if (settings.locking === 'shared' && tables.length > 0) {
      const names = tables
        .map((t) => `${main.escapeIdentifier(t.schema)}.${main.escapeIdentifier(t.table)}`)
        .join(', ');
      await main.query(`SET LOCAL lock_timeout = ${Math.trunc(settings.lockTimeoutMs)}`);
      await main.query(`LOCK TABLE ${names} IN ACCESS SHARE MODE`);
    }
    const txId = Number(
      (await main.query('SELECT txid_current_if_assigned() AS x')).rows[0].x ?? 0,
    );
    for (let i = 1; i < threads; i++) {
      const extra = await snapshotClient(o.connection, clients);
      await extra.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await extra.query(`SET TRANSACTION SNAPSHOT ${extra.escapeLiteral(snapshotName ?? '')}`);
    }
    const startedMicros = o.nowMicros();
    // The same for every row: where a snapshot record sits.
    const position: ChangePosition = {
      commitTimeMicros: startedMicros,
      snapshot: 'true',
      txId,
      lsn: o.consistentPoint,
      lastCommitLsn: null,
    };
    // Shared by every record but the marked ones, which SnapshotMarks give their own.
    const offset: SourceOffset = o.offset ?? {
      lsn: o.consistentPoint,
      txId,
      ts_usec: startedMicros,
      snapshot: true,
      last_snapshot_record: false,
    };
    const out = new SnapshotMarks(o.emit, o.offset === undefined);
    let next = 0;
    let failed = false;
    const worker = async (client: pg.Client) => {
      while (!failed && next < tables.length) {
        const id = tables[next++];
        await readTable(client, id, o, settings, position, offset, out);
      }
    };
    const results = await Promise.allSettled(
      clients.map((c) =>
        worker(c).catch((e: unknown) => {
          // The first failure ends the other COPYs: their connections close under them.
          if (!failed)
            for (const other of clients) if (other !== c) other.end().catch(() => undefined);
          failed = true;
          throw e;
        }),
      ),
    );
    const failure = results.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    await out.finish();
    await Promise.all(clients.map((c) => c.query('COMMIT')));
    return { rows: out.rows };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

async function snapshotClient(connection: pg.ClientConfig, clients: pg.Client[]) {
  const client = new pg.Client({ ...connection, options: SESSION_OPTIONS, types: textTypes });
  client.on('error', () => undefined);
  clients.push(client);
  await client.connect();
  return client;
}

/** One table, whole, on one connection: its chunks go to `out` in order. */
async function readTable(
  client: pg.Client,
  id: TableId,
  o: SnapshotOptions,
  settings: SnapshotReadSettings,
  position: ChangePosition,
  offset: SourceOffset,
  out: SnapshotMarks,
): Promise<void> {
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
  const copy = client.query(copyTo(`COPY (SELECT ${columns || 'NULL'} FROM ${from}) TO STDOUT`));
  const marks = out.table();
  let chunk: SourceRecord[] = [];
  let done = 0;
  const flush = async () => {
    done += chunk.length;
    await marks.push(chunk);
    chunk = [];
    o.onProgress?.({ table: id, rowsDone: done, rowsEstimated: Math.max(estimated, done) });
  };
  // Async iteration reads the stream in paused mode: while a chunk's emit is
  // pending nothing is pulled, the stream's buffer fills, pg-copy-streams stops
  // reading the socket and TCP holds the server back.
  for await (const data of copy as AsyncIterable<Buffer>) {
    parser.push(data);
    for (let row = parser.nextRow(); row !== null; row = parser.nextRow()) {
      chunk.push(read(row));
      if (chunk.length === o.fetchSize) await flush();
    }
  }
  parser.end();
  if (chunk.length > 0) await flush();
  await marks.finish();
  o.onTableDone?.(id);
}

/** A record with its source.snapshot (and, for the last, its offset) replaced. */
function marked(r: SourceRecord, marker: SnapshotMarker, lastOffset: boolean): SourceRecord {
  const value = r.value as { source: Record<string, unknown> };
  return {
    ...r,
    value: { ...value, source: { ...value.source, snapshot: marker } },
    ...(lastOffset ? { sourceOffset: { ...r.sourceOffset, last_snapshot_record: true } } : {}),
  };
}

interface TableHandOver {
  push(chunk: SourceRecord[]): Promise<void>;
  finish(): Promise<void>;
}

/**
 * The snapshot's hand-over to `emit`, and Debezium's markers. Each table hands its
 * chunks over through `table()`, holding its latest chunk back until the next one (or
 * its end, which marks its last row). The chunk handed over last is held here until
 * the next comes (or finish(), which marks its last row "last"). Chunks are emitted one
 * at a time, in hand-over order, whichever connection read them; a push resolves once
 * the chunk it released is emitted, which paces every connection by `emit`.
 */
class SnapshotMarks {
  rows = 0;
  private held: SourceRecord[] | null = null;
  private first = true;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly emit: SnapshotOptions['emit'],
    /** Whether the last record's offset says last_snapshot_record (the initial snapshot's). */
    private readonly markLastOffset: boolean,
  ) {}

  table(): TableHandOver {
    let held: SourceRecord[] | null = null;
    let first = true;
    return {
      push: async (chunk) => {
        if (first && chunk.length > 0) {
          chunk[0] = marked(chunk[0], 'first_in_data_collection', false);
          first = false;
        }
        const out = held;
        held = chunk;
        if (out) await this.handOver(out);
      },
      finish: async () => {
        const out = held;
        held = null;
        if (!out || out.length === 0) return;
        out[out.length - 1] = marked(out[out.length - 1], 'last_in_data_collection', false);
        await this.handOver(out);
      },
    };
  }

  /** Every table finished: the held chunk goes, its last row marked "last". */
  async finish(): Promise<void> {
    const held = this.held;
    this.held = null;
    if (held && held.length > 0) {
      held[held.length - 1] = marked(held[held.length - 1], 'last', this.markLastOffset);
      await this.emitInTurn(held);
    }
    await this.tail;
  }

  private handOver(chunk: SourceRecord[]): Promise<void> {
    if (this.first) {
      chunk[0] = marked(chunk[0], 'first', false);
      this.first = false;
    }
    this.rows += chunk.length;
    const out = this.held;
    this.held = chunk;
    return out ? this.emitInTurn(out) : Promise.resolve();
  }

  /** Emits after every chunk handed over before it: one emit at a time. */
  private emitInTurn(chunk: SourceRecord[]): Promise<void> {
    const turn = this.tail.then(() => this.emit(chunk));
    this.tail = turn.catch(() => undefined);
    return turn;
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
