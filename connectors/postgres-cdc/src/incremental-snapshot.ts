/**
 * Incremental snapshots (Debezium's execute-snapshot signal, type incremental): tables
 * read in chunks by key while streaming goes on, with the DBLog algorithm that
 * Debezium's SignalBasedIncrementalSnapshotChangeEventSource implements.
 *
 * The chunk loop below (its own connection, autocommit), one round trip per chunk N:
 *   1. one transaction: INSERT the close watermark of chunk N-1 (id `<chunk>-close`),
 *      if one is still to close, then the open watermark of chunk N (`<chunk>-open`)
 *   2. COPY the next chunk.size rows by key, above the last key read and up to the
 *      table's maximum key when its reading began, in key order
 * Both go out in one write (statement-then-copy.ts): the server runs them one after the
 * other, so the COPY's snapshot is taken after the open watermark committed, as
 * DBLog needs. Chunk N's close then goes with chunk N+1's open; when there is no next
 * chunk to open (the snapshot is read to its end, paused, or MAX_WINDOWS_IN_FLIGHT
 * ahead of the stream) the close goes alone. So there is exactly one open and one
 * close per chunk, and in the stream the windows follow one another and never
 * overlap: a close and the next open commit together, close first, and no other
 * transaction's change falls between them. The loop runs ahead of the stream by up to
 * MAX_WINDOWS_IN_FLIGHT chunks, so a stream that lags (a busy database, a full queue)
 * does not stall the reading; each chunk's rows are held until its close.
 * And in the stream (synchronously, in WAL order, from the change event source):
 *   - at the open watermark the window opens;
 *   - while it is open, every change of the table drops the chunk's read of the same
 *     key: the change committed after the open watermark, so it is as new as the
 *     read or newer, and it already went out;
 *   - at the close watermark the reads that are left go out as op `r` events
 *     (source.snapshot "incremental"), right there in the stream, before the close
 *     watermark's own record. A change committed after the close watermark comes
 *     later in the stream, so no read ever overwrites a newer change.
 * The COPY may finish before or after the stream passes the open watermark: keys are
 * collected from the open watermark on and only applied at the close, after the rows
 * arrived (the close is inserted after the COPY returned, so it can only be streamed
 * after). Only the first window in flight can be open, so a change is looked up in
 * one set of changed keys; a chunk's reads are checked against it by the first key
 * field's value first (ChangedKeys), so an unchanged row costs one Set lookup.
 *
 * read.only=true: no watermark is written. A chunk is read in a REPEATABLE READ
 * transaction that first answers its snapshot and the WAL position after it
 * (read-only-watermarks.ts); the window is open from the start. The stream keeps the
 * changes of the tables under snapshot with their transactions, and a chunk goes out
 * once the stream has passed its position (before the first change of a transaction
 * that committed there or later, or at a keepalive between transactions, which the
 * loop asks for while chunks wait), without the reads of keys that a transaction its
 * snapshot did not see committed has changed: those changes are newer than the reads.
 *
 * incremental.snapshot.watermarking.strategy=insert_delete (Debezium's other strategy):
 * a chunk's close is the DELETE of its open row (by the signal table's first column,
 * its id) instead of the INSERT of a close row, so the signal table keeps no
 * watermarks; the task takes that delete, in the stream, as the close.
 *
 * Offsets (incremental-snapshot-offsets.ts): while a snapshot is under way every
 * streamed record carries its state. A chunk's reads carry the state before the
 * chunk, all but the last, which carries the state after it: a restart from any of
 * them reads the chunk again (at least once), and from the last one goes on with the
 * next chunk. A restart finds the watermarks of the old chunks in the stream again;
 * their ids are not the new chunks', so they are ignored (an open of the old run
 * that was never closed is only a row in the signal table).
 *
 * Tables: data-collections are regular expressions matched whole against the
 * captured tables' schema.table; one that matches none is logged and skipped. A table
 * whose key is empty (no primary key and no message.key.columns) is skipped with
 * Debezium's warning. stop-snapshot removes tables (all when it names none); the
 * chunk in flight of a removed table is dropped at its close. pause-snapshot stops
 * before the next chunk (the one read last is closed); resume-snapshot goes on.
 *
 * Memory: at most MAX_WINDOWS_IN_FLIGHT x incremental.snapshot.chunk.size rows (the
 * chunks read and not yet closed in the stream, the one whose close is not written yet
 * included), plus the keys changed in the stream while the first of them is open.
 *
 * Owner: the task. start() once when streaming starts, stop() once (it ends the loop's
 * wait and its connection); every stream-side method is called on the event loop from
 * the change event source's handling.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  type OffsetValue,
  type SourceOffset,
  type SourceRecord,
  Wakeup,
} from '../../../src/connect/api/index.ts';
import type { WatermarkingStrategy } from './connector-config.ts';
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
  beginChunkSnapshot,
  type ChunkSnapshot,
  sawCommitted,
  walPassed,
  walSegmentBytes,
  widenXid,
} from './read-only-watermarks.ts';
import {
  type ExecuteSnapshotRequest,
  type SignalPosition,
  type SnapshotSignals,
  WINDOW_CLOSE,
  WINDOW_OPEN,
} from './signals/signal-processor.ts';
import { qualifiedName } from './signals/signal-table.ts';
import { describeTable } from './snapshot-reader.ts';
import { StatementThenCopy } from './statement-then-copy.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import { capturedColumnsOnly, type TableSchema } from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import type { MappingModes } from './type-mapping.ts';
import { TypeRegistry } from './type-registry.ts';

export interface IncrementalSnapshotOptions {
  connection: pg.ClientConfig;
  signalTable: TableId;
  chunkSize: number;
  /** insert_delete: a chunk's close deletes its open row instead of inserting a close row. */
  watermarking: WatermarkingStrategy;
  /** read.only=true: no watermarks; each chunk's snapshot and position stand in (read-only-watermarks.ts). */
  readOnly: boolean;
  /** Read-only: asks the stream for a keepalive, so an idle database releases chunks. */
  requestKeepalive?(): void;
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

/** A table as the chunks read it: its captured columns only, readers compiled once. */
interface ReadTable {
  table: TableSchema;
  captured: TableSchema;
  /** The key columns' places in a row of `captured` (each key column is a captured one). */
  keyPositions: number[];
  /** The first key field, whose value prefilters the changed keys (ChangedKeys). */
  firstKeyField: string | null;
}

interface Window {
  chunkId: string;
  collection: SnapshotCollection;
  table: ReadTable;
  open: boolean;
  /** Keys changed in the stream since the window opened. */
  changed: ChangedKeys;
  /** The chunk's rows (the captured columns), once read. */
  rows: ColumnValue[][] | null;
  /** The table's maximum key, and the key of the chunk's last row (null: no row). */
  maxKey: string[];
  endKey: string[] | null;
  /** Whether the chunk reached the end of the table (fewer rows than a chunk). */
  lastOfTable: boolean;
  /** When its open watermark was written (the watermarks' data). */
  openedAt: string;
  /** Read-only: the chunk's snapshot and the WAL position after it, once taken. */
  snapshot: ChunkSnapshot | null;
}

/** Read-only: a streamed change of a table under snapshot, kept until no snapshot can miss it. */
interface StreamedChange {
  table: string;
  xid: number;
  key: unknown;
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
  /** The offset fields of `state`, asked for by every streamed change: made once per change of it. */
  private fields: Readonly<Record<string, OffsetValue>> | null | undefined;
  private cursor: Cursor | null = null;
  /** Tables the loop has read to their end, their last windows maybe still in flight. */
  private readonly readToEnd = new Set<string>();
  private paused = false;
  private stopping = false;
  /** Chunks read and watermarked, in WAL order; the first one is the next to close. */
  private readonly windows: Window[] = [];
  /** The chunk last read, whose close watermark goes out with the next chunk's open. */
  private unclosed: Window | null = null;
  private loop: Promise<void> | null = null;
  private readonly wakeup = new Wakeup();
  private readonly described = new Map<string, ReadTable>();
  /** The signal table's id column (its first, as Debezium reads it), for insert_delete. */
  private signalIdColumn = 'id';
  /** Read-only: changes of the tables under snapshot, for the chunks' snapshots to judge. */
  private streamed: StreamedChange[] = [];
  /** Read-only: the server's WAL segment size (a long page header starts each segment). */
  private segmentBytes = 16 * 1024 * 1024;
  /** Rows delivered by this task's incremental snapshots. */
  rowsRead = 0;

  constructor(private readonly o: IncrementalSnapshotOptions) {}

  /** Take up the snapshot a stored offset was in the middle of. */
  restore(offset: Parameters<typeof stateFromOffset>[0]): void {
    const state = stateFromOffset(offset);
    if (!state || state.collections.length === 0) return;
    this.state = state;
    this.stateChanged();
    this.cursor = { id: state.collections[0].id, lastKey: state.lastKey, maxKey: state.maxKey };
    this.o.log.info(
      `incremental snapshot resumed: ${state.collections.map((c) => c.id).join(', ')}`,
    );
  }

  /** The offset fields every streamed record carries now; null when none is under way. */
  offsetFields(): Readonly<Record<string, OffsetValue>> | null {
    this.fields ??= stateOffsetFields(this.state);
    return this.fields;
  }

  /** Every change of `state` drops the offset fields made of it. */
  private stateChanged(): void {
    this.fields = undefined;
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
      this.stateChanged();
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
    this.stateChanged();
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

  /**
   * A change of a captured table, in stream order: drops the open chunk's read of its
   * key. Read-only: kept with its transaction, for the chunks' snapshots to judge.
   */
  observe(table: TableId, records: readonly SourceRecord[], txId: number | null): void {
    if (this.o.readOnly) {
      this.remember(table, records, txId);
      return;
    }
    const w = this.windows[0];
    if (!w?.open) return;
    const id = w.table.table.id;
    if (id.schema !== table.schema || id.table !== table.table) return;
    for (const r of records) if (r.key != null) w.changed.add(r.key);
  }

  closeWindow(chunkId: string, at: SignalPosition): SourceRecord[] {
    const w = this.windows[0];
    if (this.o.readOnly || !w || w.chunkId !== chunkId || !w.open || w.rows === null) return [];
    this.windows.shift();
    return this.release(w, at);
  }

  /**
   * Read-only: the reads of the chunks whose position the stream has passed, `at` the
   * place they go out (before a change of a transaction committed at `lsn` or later, or
   * at a keepalive between transactions whose wal_end is `lsn`). Each chunk drops the
   * reads of keys changed by a transaction its snapshot did not see committed.
   */
  streamPassed(lsn: number, at: SignalPosition): SourceRecord[] {
    if (!this.o.readOnly) return [];
    let out: SourceRecord[] | null = null;
    for (;;) {
      const w = this.windows[0];
      const chunk = w?.snapshot;
      if (!w || !chunk || w.rows === null || !walPassed(lsn, chunk.position, this.segmentBytes))
        break;
      this.windows.shift();
      const table = w.table.table.id;
      const id = `${table.schema}.${table.table}`;
      for (const c of this.streamed)
        if (c.table === id && !sawCommitted(chunk.snapshot, c.xid)) w.changed.add(c.key);
      // No later snapshot is older than this one: what it saw finished, every later one sees.
      const { xmin, xmax } = chunk.snapshot;
      this.streamed = this.streamed.filter((c) => widenXid(c.xid, xmax) >= xmin);
      const reads = this.release(w, at);
      out = out === null ? reads : [...out, ...reads];
    }
    return out ?? [];
  }

  private remember(table: TableId, records: readonly SourceRecord[], txId: number | null): void {
    const id = `${table.schema}.${table.table}`;
    if (txId === null || !this.state.collections.some((c) => c.id === id)) return;
    for (const r of records)
      if (r.key != null) this.streamed.push({ table: id, xid: txId, key: r.key });
  }

  /** A chunk's reads at its close (`w` taken off the windows in flight). */
  private release(w: Window, at: SignalPosition): SourceRecord[] {
    this.wakeup.wake();
    const dropped = this.state.collections[0]?.id !== w.collection.id;
    if (dropped) return [];
    // The reads go out before the close watermark's record, at its LSN: not done with
    // it (lsn_proc one before), as the change event source would make them anyway.
    const base = { ...at.offset, lsn_proc: at.lsn - 1 };
    const before = { ...base, ...this.offsetFields() };
    if (w.lastOfTable) this.finishTable(w.collection);
    else {
      this.state.lastKey = w.endKey;
      this.state.maxKey = w.maxKey;
      this.stateChanged();
    }
    const after = { ...base, ...this.offsetFields() };
    return this.reads(w, at, before, after);
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
      this.signalIdColumn = await firstColumn(client, this.o.signalTable);
      if (this.o.readOnly) this.segmentBytes = await walSegmentBytes(client);
      while (!this.stopping) {
        const collection = this.nextToRead();
        if (!collection || this.paused || this.windows.length >= MAX_WINDOWS_IN_FLIGHT) {
          // No next chunk to open with it: the last one read closes alone.
          const close = this.watermarks(client, null);
          if (close !== null) await client.query(close);
          else if (this.o.readOnly && this.windows.length > 0) {
            // Chunks wait for the stream to pass their position: on an idle database
            // only a keepalive says it has.
            this.o.requestKeepalive?.();
            await this.wakeup.wait(KEEPALIVE_ASK_MS);
          } else await this.wakeup.wait(IDLE_WAIT_MS);
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
    const read = await this.describe(client, registry, collection);
    if (read === null) return;
    const table = read.table;
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
    const captured = read.captured.columns.map((c) => client.escapeIdentifier(c.name));
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
      table: read,
      open: false,
      changed: new ChangedKeys(read.firstKeyField),
      rows: null,
      maxKey: cursor.maxKey,
      endKey: null,
      lastOfTable: false,
      openedAt: new Date().toISOString(),
      snapshot: null,
    };
    // In flight from its open watermark on: the stream may reach it before the rows arrive.
    this.windows.push(window);
    const copy = `COPY (SELECT ${captured.join(', ')} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${keys.join(', ')} LIMIT ${Math.trunc(this.o.chunkSize)}) TO STDOUT`;
    const rows = this.o.readOnly
      ? await this.readOnlyChunk(client, window, copy, captured.length)
      : await this.watermarkedChunk(client, window, copy, captured.length);
    const lastRow = rows[rows.length - 1];
    window.endKey = lastRow ? read.keyPositions.map((p) => String(lastRow[p])) : null;
    window.lastOfTable = rows.length < this.o.chunkSize;
    window.rows = rows;
    cursor.lastKey = window.endKey ?? cursor.lastKey;
    if (window.lastOfTable) this.readToEnd.add(collection.id);
    if (!this.o.readOnly) this.unclosed = window;
  }

  /**
   * The watermarks, then the chunk in the same round trip (statement-then-copy.ts): the
   * COPY starts once they committed. COPY, as the initial snapshot reads
   * (snapshot-reader.ts): the same text as pgoutput sends, parsed in bulk, rather than
   * a result row object per row.
   */
  private async watermarkedChunk(
    client: pg.Client,
    window: Window,
    copy: string,
    columns: number,
  ): Promise<ColumnValue[][]> {
    const chunk = new StatementThenCopy(
      this.watermarks(client, window) as string,
      copy,
      new CopyTextParser(columns),
    );
    client.query(chunk);
    return chunk.done;
  }

  /**
   * Read-only: the chunk in a REPEATABLE READ transaction that first answers its
   * snapshot and position (read-only-watermarks.ts); nothing is written. The window
   * is open from the start: the stream judges its changes by the snapshot.
   */
  private async readOnlyChunk(
    client: pg.Client,
    window: Window,
    copy: string,
    columns: number,
  ): Promise<ColumnValue[][]> {
    window.open = true;
    try {
      window.snapshot = await beginChunkSnapshot(client);
      const chunk = new StatementThenCopy(null, copy, new CopyTextParser(columns));
      client.query(chunk);
      const rows = await chunk.done;
      await client.query('COMMIT');
      return rows;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  private async describe(
    client: pg.Client,
    registry: TypeRegistry,
    collection: SnapshotCollection,
  ): Promise<ReadTable | null> {
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
      const captured = capturedColumnsOnly(table);
      const read: ReadTable = {
        table,
        captured,
        keyPositions: captured.keyColumns.map((c) => c.position),
        firstKeyField: captured.keyColumns[0]?.field ?? null,
      };
      this.described.set(collection.id, read);
      return read;
    } catch (e) {
      this.o.log.warn(
        `Schema not found for table '${collection.id}': ${e instanceof Error ? e.message : String(e)}; skipped`,
      );
      this.skipTable(collection);
      return null;
    }
  }

  /**
   * The SQL of one transaction with the close watermark of the chunk last read (if
   * any, and it counts as written from now on) and the open watermark of `next` (if
   * any); null when there is neither. In the stream the close comes first, so the
   * windows follow one another and never overlap, and no other transaction's change
   * falls between the two. A transaction with a close commits synchronously (the
   * stream sees it only once its WAL is flushed); an open alone does not wait for its
   * flush: the next close's flush flushes it too, and the stream cannot act on an
   * open before its close anyway.
   */
  private watermarks(client: pg.Client, next: Window | null): string | null {
    const signal = qualifiedName(this.o.signalTable, (n) => client.escapeIdentifier(n));
    const insert = (id: string, type: string, data: Record<string, string>) => {
      const values = [id, type, JSON.stringify(data)].map((v) => client.escapeLiteral(v));
      return `INSERT INTO ${signal} VALUES (${values.join(', ')})`;
    };
    const inserts: string[] = [];
    const closing = this.unclosed;
    this.unclosed = null;
    if (closing && this.o.watermarking === 'insert_delete')
      inserts.push(
        `DELETE FROM ${signal} WHERE ${client.escapeIdentifier(this.signalIdColumn)} = ${client.escapeLiteral(`${closing.chunkId}-open`)}`,
      );
    else if (closing)
      inserts.push(
        insert(`${closing.chunkId}-close`, WINDOW_CLOSE, {
          openWindowTimestamp: closing.openedAt,
          closeWindowTimestamp: new Date().toISOString(),
        }),
      );
    if (next)
      inserts.push(
        insert(`${next.chunkId}-open`, WINDOW_OPEN, { openWindowTimestamp: next.openedAt }),
      );
    if (inserts.length === 0) return null;
    // Several statements of one simple query are one transaction.
    return closing
      ? inserts.join('; ')
      : `BEGIN; SET LOCAL synchronous_commit TO off; ${inserts[0]}; COMMIT`;
  }

  /**
   * The chunk's reads whose keys did not change while the window was open. All but the
   * last carry `before` (a restart from them reads the chunk again), the last `after`
   * (a restart from it goes on past the chunk). Every read of one offset shares it.
   */
  private reads(
    w: Window,
    at: SignalPosition,
    before: SourceOffset,
    after: SourceOffset,
  ): SourceRecord[] {
    const position: ChangePosition = {
      commitTimeMicros: at.commitTimeMicros,
      snapshot: 'incremental',
      txId: at.txId,
      lsn: at.lsn,
      lastCommitLsn: null,
    };
    const captured = w.table.captured;
    const read = readRecordMaker(this.o.context, captured, position, before);
    const out: SourceRecord[] = [];
    const changed = w.changed;
    let last: ColumnValue[] | null = null;
    for (const row of w.rows ?? []) {
      const record = read(row);
      if (changed.size > 0 && record.key != null && changed.has(record.key)) continue;
      out.push(record);
      last = row;
    }
    if (last !== null)
      out[out.length - 1] = readRecordMaker(this.o.context, captured, position, after)(last);
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
    this.stateChanged();
    if (i === 0) {
      this.state.lastKey = null;
      this.state.maxKey = null;
    }
    this.described.delete(collection.id);
    this.o.log.info(`incremental snapshot of ${collection.id} done`);
    if (this.state.collections.length === 0) this.o.log.info('incremental snapshot done');
  }
}

/** Read-only: how often a loop with chunks waiting asks the stream for a keepalive. */
const KEEPALIVE_ASK_MS = 200;

/** How many chunks may be read ahead of the stream (each held in memory until its close). */
const MAX_WINDOWS_IN_FLIGHT = 4;

function wholeName(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'i');
}

/** The first column of `table` (a signal table's id, as Debezium reads its columns by place). */
async function firstColumn(client: pg.Client, table: TableId): Promise<string> {
  const r = await client.query<{ attname: string }>(
    `SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum LIMIT 1`,
    [table.schema, table.table],
  );
  return r.rows[0]?.attname ?? 'id';
}

function splitId(id: string): [string, string] {
  const dot = id.indexOf('.');
  return [id.slice(0, dot), id.slice(dot + 1)];
}

/**
 * The keys of one table changed in the stream while a window is open. Asked once per
 * row of the chunk: the first key field's value, when a primitive, is looked up in a
 * Set first, so a row whose key did not change costs one lookup, not its key's text;
 * only a row that shares a first value with a change is compared whole (keyText).
 */
class ChangedKeys {
  private readonly firsts = new Set<unknown>();
  private readonly whole = new Set<string>();

  constructor(private readonly firstField: string | null) {}

  get size(): number {
    return this.whole.size;
  }

  add(key: unknown): void {
    this.whole.add(keyText(key));
    const first = this.first(key);
    if (first !== undefined) this.firsts.add(first);
  }

  has(key: unknown): boolean {
    const first = this.first(key);
    if (first !== undefined && !this.firsts.has(first)) return false;
    return this.whole.has(keyText(key));
  }

  /** The first field's value when a primitive (a Set compares those by value). */
  private first(key: unknown): unknown {
    if (this.firstField === null || typeof key !== 'object' || key === null) return undefined;
    const v = (key as Record<string, unknown>)[this.firstField];
    return v === null || (typeof v !== 'object' && typeof v !== 'function') ? v : undefined;
  }
}

/** A record key as text, for equality (bigints and bytes included). */
export function keyText(key: unknown): string {
  // The replacer (a call per value) only where a bigint may be: the text is the same.
  return JSON.stringify(key, plainKey(key) ? undefined : bigintText);
}

function bigintText(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}

/** A struct of strings, numbers, booleans and nulls only (no bigint anywhere in it). */
function plainKey(key: unknown): boolean {
  if (typeof key !== 'object' || key === null) return typeof key !== 'bigint';
  if (Array.isArray(key) || ArrayBuffer.isView(key)) return false;
  for (const k in key) {
    const v = (key as Record<string, unknown>)[k];
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      return false;
  }
  return true;
}
