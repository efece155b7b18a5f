/**
 * Incremental snapshots (Debezium's execute-snapshot signal, type incremental): tables
 * read in chunks by key while streaming goes on, with the DBLog algorithm that
 * Debezium's SignalBasedIncrementalSnapshotChangeEventSource implements.
 *
 * One chunk, in the loop below (its own connection, autocommit):
 *   1. INSERT the open watermark into the signal table (id `<chunk>-open`)
 *   2. SELECT the next chunk.size rows by key, above the last key read and up to
 *      the table's maximum key when its reading began, in key order
 *   3. INSERT the close watermark (id `<chunk>-close`)
 * The loop reads ahead of the stream by up to MAX_WINDOWS_IN_FLIGHT chunks, so a
 * stream that lags (a busy database, a full queue) does not stall the reading: each
 * window's open watermark is inserted after the previous one's close, so in the
 * stream the windows follow one another, never overlap, and each one's rows are held
 * until its close.
 * And in the stream (synchronously, in WAL order, from the change event source):
 *   - at the open watermark the window opens;
 *   - while it is open, every change of the table drops the chunk's read of the same
 *     key: the change committed after the open watermark, so it is as new as the
 *     read or newer, and it already went out;
 *   - at the close watermark the reads that are left go out as op `r` events
 *     (source.snapshot "incremental"), right there in the stream, before the close
 *     watermark's own record. A change committed after the close watermark comes
 *     later in the stream, so no read ever overwrites a newer change.
 * The SELECT may finish before or after the stream passes the open watermark: keys
 * are collected from the open watermark on and only applied at the close, after the
 * rows arrived (the close is inserted after the SELECT returned, so it can only be
 * streamed after).
 *
 * Offsets (incremental-snapshot-offsets.ts): while a snapshot is under way every
 * streamed record carries its state. A chunk's reads carry the state before the
 * chunk, all but the last, which carries the state after it: a restart from any of
 * them reads the chunk again (at least once), and from the last one goes on with the
 * next chunk. A restart finds the watermarks of the old chunk in the stream again;
 * their ids are not the new chunk's, so they are ignored.
 *
 * Tables: data-collections are regular expressions matched whole against the
 * captured tables' schema.table; one that matches none is logged and skipped. A table
 * whose key is empty (no primary key and no message.key.columns) is skipped with
 * Debezium's warning. stop-snapshot removes tables (all when it names none); the
 * chunk in flight of a removed table is dropped at its close. pause-snapshot stops
 * before the next chunk; resume-snapshot goes on.
 *
 * Memory: at most MAX_WINDOWS_IN_FLIGHT x incremental.snapshot.chunk.size rows.
 *
 * Owner: the task. start() once when streaming starts, stop() once (it ends the loop's
 * wait and its connection); every stream-side method is called on the event loop from
 * the change event source's handling.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { type SourceRecord, Wakeup } from '../../../src/connect/api/index.ts';
import { CopyTextParser } from './copy-text-parser.ts';
import { type ChangePosition, type EventContext, readRecordMaker } from './event-builder.ts';
import {
  type IncrementalSnapshotState,
  type SnapshotCollection,
  stateFromOffset,
  stateOffsetFields,
} from './incremental-snapshot-offsets.ts';
import type { Logger } from './logger.ts';
import type { ColumnValue } from './pgoutput-decoder.ts';
import {
  type ExecuteSnapshotRequest,
  type SignalPosition,
  type SnapshotSignals,
  WINDOW_CLOSE,
  WINDOW_OPEN,
} from './signals/signal-processor.ts';
import { qualifiedName } from './signals/signal-table.ts';
import { describeTable } from './snapshot-reader.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import { capturedColumnsOnly, type TableSchema } from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import type { MappingModes } from './type-mapping.ts';
import { TypeRegistry } from './type-registry.ts';

export interface IncrementalSnapshotOptions {
  connection: pg.ClientConfig;
  signalTable: TableId;
  chunkSize: number;
  context: EventContext;
  modes: MappingModes;
  /** The configured filter (not the signal table's). */
  filter: TableFilter;
  topicPrefix: string;
  /** The captured tables, which data-collections are matched against. */
  capturedTables(): readonly TableId[];
  log: Logger;
  /** Sees the schema of each table before its first read goes out. */
  onTable?(table: TableSchema): void;
  /** A failure of the loop (a query refused): the task fails. */
  onFatal(error: Error): void;
}

/** How often an idle loop looks again without being woken (it is woken on every signal). */
const IDLE_WAIT_MS = 5_000;

/** Keep every column as the text Postgres sent (the same text pgoutput sends). */
const textTypes = {
  getTypeParser: () => (value: string) => value,
} as unknown as pg.CustomTypesConfig;

interface Window {
  chunkId: string;
  collection: SnapshotCollection;
  table: TableSchema;
  open: boolean;
  /** Keys (keyText) changed in the stream since the window opened. */
  changed: Set<string>;
  /** The chunk's rows (captured columns, then the key columns), once read. */
  rows: ColumnValue[][] | null;
  /** The table's maximum key, and the key of the chunk's last row (null: no row). */
  maxKey: string[];
  endKey: string[] | null;
  /** Whether the chunk reached the end of the table (fewer rows than a chunk). */
  lastOfTable: boolean;
}

/** Where the loop reads next: ahead of the stream by the windows in flight. */
interface Cursor {
  id: string;
  lastKey: string[] | null;
  maxKey: string[] | null;
}

export class IncrementalSnapshot implements SnapshotSignals {
  /** What the stream has delivered: the state the offsets carry. */
  private state: IncrementalSnapshotState = { collections: [], lastKey: null, maxKey: null };
  private cursor: Cursor | null = null;
  /** Tables the loop has read to their end, their last windows maybe still in flight. */
  private readonly readToEnd = new Set<string>();
  private paused = false;
  private stopping = false;
  /** Chunks read and watermarked, in WAL order; the first one is the next to close. */
  private readonly windows: Window[] = [];
  private loop: Promise<void> | null = null;
  private readonly wakeup = new Wakeup();
  private readonly described = new Map<string, TableSchema>();
  /** Rows delivered by this task's incremental snapshots. */
  rowsRead = 0;

  constructor(private readonly o: IncrementalSnapshotOptions) {}

  /** Take up the snapshot a stored offset was in the middle of. */
  restore(offset: Parameters<typeof stateFromOffset>[0]): void {
    const state = stateFromOffset(offset);
    if (!state || state.collections.length === 0) return;
    this.state = state;
    this.cursor = { id: state.collections[0].id, lastKey: state.lastKey, maxKey: state.maxKey };
    this.o.log.info(
      `incremental snapshot resumed: ${state.collections.map((c) => c.id).join(', ')}`,
    );
  }

  /** The offset fields every streamed record carries now; null when none is under way. */
  offsetFields() {
    return stateOffsetFields(this.state);
  }

  start(): void {
    this.loop ??= this.run().catch((e: unknown) => {
      if (!this.stopping) this.o.onFatal(e instanceof Error ? e : new Error(String(e)));
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeup.wake();
    await this.loop;
  }

  // --- signals (stream side) ---

  execute(request: ExecuteSnapshotRequest): void {
    const captured = this.o.capturedTables();
    const known = new Set(this.state.collections.map((c) => c.id));
    const added: string[] = [];
    for (const pattern of request.dataCollections) {
      const re = wholeName(pattern);
      const matches = captured.filter((t) => re.test(`${t.schema}.${t.table}`));
      if (matches.length === 0)
        this.o.log.warn(
          `execute-snapshot signal '${request.signalId}': data collection '${pattern}' matches no captured table; skipped`,
        );
      for (const t of matches) {
        const id = `${t.schema}.${t.table}`;
        if (known.has(id)) continue;
        known.add(id);
        const condition = request.additionalConditions.find((c) =>
          wholeName(c.dataCollection).test(id),
        );
        this.state.collections.push({ id, additionalCondition: condition?.filter ?? null });
        added.push(id);
      }
    }
    if (added.length > 0) {
      this.o.log.info(`incremental snapshot of ${added.join(', ')} requested`);
      this.wakeup.wake();
    }
  }

  stopSnapshot(dataCollections: string[]): void {
    const first = this.state.collections[0]?.id;
    const stopped = this.state.collections.filter(
      (c) => dataCollections.length === 0 || dataCollections.some((p) => wholeName(p).test(c.id)),
    );
    if (stopped.length === 0) return;
    this.state.collections = this.state.collections.filter((c) => !stopped.includes(c));
    if (this.state.collections[0]?.id !== first) {
      this.state.lastKey = null;
      this.state.maxKey = null;
    }
    this.o.log.info(`incremental snapshot of ${stopped.map((c) => c.id).join(', ')} stopped`);
    this.wakeup.wake();
  }

  pause(): void {
    this.paused = true;
    this.o.log.info('incremental snapshot paused');
  }

  resume(): void {
    this.paused = false;
    this.o.log.info('incremental snapshot resumed');
    this.wakeup.wake();
  }

  openWindow(chunkId: string): void {
    const w = this.windows.find((x) => x.chunkId === chunkId);
    if (!w) {
      this.o.log.debug(`window open for chunk ${chunkId} ignored: no such chunk in flight`);
      return;
    }
    w.open = true;
  }

  /** A change of a captured table, in stream order: drops the open chunk's read of its key. */
  observe(table: TableId, records: readonly SourceRecord[]): void {
    const w = this.windows[0];
    if (!w?.open || w.table.id.schema !== table.schema || w.table.id.table !== table.table) return;
    for (const r of records) if (r.key != null) w.changed.add(keyText(r.key));
  }

  closeWindow(chunkId: string, at: SignalPosition): SourceRecord[] {
    const w = this.windows[0];
    if (!w || w.chunkId !== chunkId || !w.open || w.rows === null) return [];
    this.windows.shift();
    this.wakeup.wake();
    const dropped = this.state.collections[0]?.id !== w.collection.id;
    if (dropped) return [];
    const before = stateOffsetFields(this.state);
    const reads = this.reads(w, at);
    if (w.lastOfTable) this.finishTable(w.collection);
    else {
      this.state.lastKey = w.endKey;
      this.state.maxKey = w.maxKey;
    }
    const after = stateOffsetFields(this.state);
    // All but the last read repeat the chunk on a restart; the last one moves past it.
    return reads.map((r, i) => ({
      ...r,
      sourceOffset: { ...r.sourceOffset, ...(i === reads.length - 1 ? after : before) },
    }));
  }

  // --- the chunk loop ---

  private async run(): Promise<void> {
    const client = new pg.Client({
      ...this.o.connection,
      options: SESSION_OPTIONS,
      types: textTypes,
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      // A walsender sends only flushed WAL: with synchronous_commit off (on the server or
      // for the user) a watermark would wait for the WAL writer (wal_writer_delay, 200 ms
      // by default) before the stream sees it, and every chunk with it.
      await client.query('SET synchronous_commit TO on');
      const registry = new TypeRegistry(client);
      await registry.load();
      while (!this.stopping) {
        const collection = this.nextToRead();
        if (!collection || this.paused || this.windows.length >= MAX_WINDOWS_IN_FLIGHT) {
          await this.wakeup.wait(IDLE_WAIT_MS);
          continue;
        }
        await this.readChunk(client, registry, collection);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The table the loop reads next (the cursor's, or the next not yet read to its end). */
  private nextToRead(): SnapshotCollection | null {
    const live = this.state.collections;
    for (const id of this.readToEnd) if (!live.some((c) => c.id === id)) this.readToEnd.delete(id);
    const cursor = this.cursor;
    const current = cursor && live.find((c) => c.id === cursor.id && !this.readToEnd.has(c.id));
    if (current) return current;
    const next = live.find((c) => !this.readToEnd.has(c.id)) ?? null;
    this.cursor = next && { id: next.id, lastKey: null, maxKey: null };
    return next;
  }

  private async readChunk(
    client: pg.Client,
    registry: TypeRegistry,
    collection: SnapshotCollection,
  ): Promise<void> {
    const cursor = this.cursor as Cursor;
    const table = await this.describe(client, registry, collection);
    if (table === null) return;
    const keys = table.keyColumns.map((c) => client.escapeIdentifier(c.name));
    if (keys.length === 0) {
      this.o.log.warn(
        `Incremental snapshot for table '${collection.id}' skipped cause the table has no primary keys`,
      );
      this.skipTable(collection);
      return;
    }
    const from = qualifiedName(table.id, (n) => client.escapeIdentifier(n));
    const condition = collection.additionalCondition ? `(${collection.additionalCondition})` : null;
    if (cursor.maxKey === null) {
      const max = await client.query({
        text: `SELECT ${keys.join(', ')} FROM ${from}${condition ? ` WHERE ${condition}` : ''} ORDER BY ${keys.map((k) => `${k} DESC`).join(', ')} LIMIT 1`,
        rowMode: 'array',
      });
      if (max.rows.length === 0) {
        this.o.log.info(`incremental snapshot of ${collection.id}: no rows`);
        this.skipTable(collection);
        return;
      }
      cursor.maxKey = (max.rows[0] as string[]).map(String);
    }
    const captured = capturedColumnsOnly(table).columns.map((c) => client.escapeIdentifier(c.name));
    // Literals, not parameters: COPY takes none. Postgres reads each text form back as
    // the key column's type (an untyped literal takes the type it is compared with).
    const tuple = (values: string[]) =>
      `(${values.map((v) => client.escapeLiteral(v)).join(', ')})`;
    const where = [`(${keys.join(', ')}) <= ${tuple(cursor.maxKey)}`];
    if (cursor.lastKey) where.push(`(${keys.join(', ')}) > ${tuple(cursor.lastKey)}`);
    if (condition) where.push(condition);
    const window: Window = {
      chunkId: randomUUID(),
      collection,
      table,
      open: false,
      changed: new Set(),
      rows: null,
      maxKey: cursor.maxKey,
      endKey: null,
      lastOfTable: false,
    };
    // In flight from its open watermark on: the stream may reach it before the rows arrive.
    this.windows.push(window);
    const openedAt = new Date().toISOString();
    await this.watermark(
      client,
      `${window.chunkId}-open`,
      WINDOW_OPEN,
      { openWindowTimestamp: openedAt },
      false,
    );
    // COPY, as the initial snapshot reads (snapshot-reader.ts): the same text as pgoutput
    // sends, parsed in bulk, rather than a result row object per row.
    const width = captured.length;
    const rows = await copyRows(
      client,
      `SELECT ${[...captured, ...keys].join(', ')} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${keys.join(', ')} LIMIT ${Math.trunc(this.o.chunkSize)}`,
      width + keys.length,
    );
    window.endKey =
      rows.length > 0 ? (rows[rows.length - 1] as string[]).slice(width).map(String) : null;
    window.lastOfTable = rows.length < this.o.chunkSize;
    window.rows = rows;
    cursor.lastKey = window.endKey ?? cursor.lastKey;
    if (window.lastOfTable) this.readToEnd.add(collection.id);
    await this.watermark(client, `${window.chunkId}-close`, WINDOW_CLOSE, {
      openWindowTimestamp: openedAt,
      closeWindowTimestamp: new Date().toISOString(),
    });
  }

  private async describe(
    client: pg.Client,
    registry: TypeRegistry,
    collection: SnapshotCollection,
  ): Promise<TableSchema | null> {
    const known = this.described.get(collection.id);
    if (known) return known;
    const [schema, name] = splitId(collection.id);
    try {
      const table = await describeTable(
        client,
        { schema, table: name },
        {
          topicPrefix: this.o.topicPrefix,
          registry,
          modes: this.o.modes,
          filter: this.o.filter,
        },
      );
      this.o.onTable?.(table);
      this.described.set(collection.id, table);
      return table;
    } catch (e) {
      this.o.log.warn(
        `Schema not found for table '${collection.id}': ${e instanceof Error ? e.message : String(e)}; skipped`,
      );
      this.skipTable(collection);
      return null;
    }
  }

  /**
   * Inserts a watermark row. The open one commits without waiting for its WAL flush
   * (`synchronous`: false): the close one's flush, which is waited for, flushes it too,
   * and the stream cannot act on an open before its close anyway. One round trip either way.
   */
  private async watermark(
    client: pg.Client,
    id: string,
    type: string,
    data: Record<string, string>,
    synchronous = true,
  ): Promise<void> {
    const signal = qualifiedName(this.o.signalTable, (n) => client.escapeIdentifier(n));
    const values = [id, type, JSON.stringify(data)].map((v) => client.escapeLiteral(v)).join(', ');
    const insert = `INSERT INTO ${signal} VALUES (${values})`;
    await client.query(
      synchronous ? insert : `BEGIN; SET LOCAL synchronous_commit TO off; ${insert}; COMMIT`,
    );
  }

  /** The chunk's reads whose keys did not change while the window was open. */
  private reads(w: Window, at: SignalPosition): SourceRecord[] {
    const table = capturedColumnsOnly(w.table);
    const width = table.columns.length;
    const position: ChangePosition = {
      commitTimeMicros: at.commitTimeMicros,
      snapshot: 'incremental',
      txId: at.txId,
      lsn: at.lsn,
      lastCommitLsn: null,
    };
    const read = readRecordMaker(this.o.context, table, position, at.offset);
    const out: SourceRecord[] = [];
    const anyChanged = w.changed.size > 0;
    for (const row of w.rows ?? []) {
      const record = read(row.slice(0, width));
      if (anyChanged && record.key != null && w.changed.has(keyText(record.key))) continue;
      out.push(record);
    }
    this.rowsRead += out.length;
    return out;
  }

  /**
   * A table with nothing to read (no key, no rows, gone): dropped at once. Windows in
   * flight belong to tables before it, so it is not the first and the keys stay.
   */
  private skipTable(collection: SnapshotCollection): void {
    this.finishTable(collection);
  }

  private finishTable(collection: SnapshotCollection): void {
    const i = this.state.collections.findIndex((c) => c.id === collection.id);
    if (i >= 0) this.state.collections.splice(i, 1);
    if (i === 0) {
      this.state.lastKey = null;
      this.state.maxKey = null;
    }
    this.described.delete(collection.id);
    this.o.log.info(`incremental snapshot of ${collection.id} done`);
    if (this.state.collections.length === 0) this.o.log.info('incremental snapshot done');
  }
}

/** The rows of `select` through COPY in text format, each as its fields' text. */
async function copyRows(
  client: pg.Client,
  select: string,
  columns: number,
): Promise<ColumnValue[][]> {
  const parser = new CopyTextParser(columns);
  const rows: ColumnValue[][] = [];
  const copy = client.query(copyTo(`COPY (${select}) TO STDOUT`));
  for await (const data of copy as AsyncIterable<Buffer>) {
    parser.push(data);
    for (let row = parser.nextRow(); row !== null; row = parser.nextRow()) rows.push(row);
  }
  parser.end();
  return rows;
}

/** How many chunks may be read ahead of the stream (each held in memory until its close). */
const MAX_WINDOWS_IN_FLIGHT = 4;

function wholeName(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'i');
}

function splitId(id: string): [string, string] {
  const dot = id.indexOf('.');
  return [id.slice(0, dot), id.slice(dot + 1)];
}

/** A record key as text, for equality (bigints and bytes included). */
export function keyText(key: unknown): string {
  return JSON.stringify(key, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
}
