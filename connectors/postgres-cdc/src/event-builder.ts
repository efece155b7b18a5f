/**
 * Debezium change events: the key and the value envelope of every row change,
 * exactly as Debezium's Postgres connector lays them out, so consumers written for
 * Debezium read ours.
 *
 *   key    struct `<topic>.Key` of the key columns, or null
 *   value  struct `<topic>.Envelope` (envelope-schema.ts)
 * (topic and names per topic.naming.strategy and the name adjustment modes: table-schema.ts)
 * Operations that become several records: delete -> delete + tombstone (null value,
 * when tombstones.on.delete), primary-key change -> delete (+ tombstone) of the old
 * key then create of the new key.
 * A delete whose old row Postgres sent without some NOT NULL columns (REPLICA
 * IDENTITY DEFAULT or USING INDEX: only the identity's columns) holds Debezium's
 * placeholders in them ("" or 0, table-schema.ts `fallback`) and names them in the
 * header BEFORE_PLACEHOLDERS_HEADER, so `unwrap` can show them as null.
 * Hot path (every row of a snapshot, every change of the stream): the per-table work
 * is done once in table-schema.ts (compiled row readers, the envelope schema); here
 * each event is a handful of fixed-shape object literals.
 */
import {
  BEFORE_PLACEHOLDERS_HEADER,
  type Header,
  type Schema,
  Schemas,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
} from '../../../src/connect/api/index.ts';
import type { Tuple } from './pgoutput-decoder.ts';
import { rowKey, rowValue, type TableSchema } from './table-schema.ts';
import type { TransactionBlock } from './transaction-metadata.ts';

export const CONNECTOR_VERSION = '0.1.0';

export type Op = 'c' | 'u' | 'd' | 'r' | 't';
/**
 * source.snapshot: 'incremental' on the reads of an incremental snapshot
 * (incremental-snapshot.ts); first, first_in_data_collection, last_in_data_collection
 * and last mark places in an initial or blocking one (snapshot-reader.ts).
 */
export type SnapshotMarker =
  | 'true'
  | 'first'
  | 'first_in_data_collection'
  | 'last_in_data_collection'
  | 'last'
  | 'false'
  | 'incremental';

/** Where a change sits: what goes into `source` and the record's offset. */
export interface ChangePosition {
  /** Commit time of the transaction (snapshot: when the snapshot read the row), epoch µs. */
  commitTimeMicros: number;
  snapshot: SnapshotMarker;
  txId: number | null;
  /** LSN of this change (XLogData start); the snapshot's consistent point in a snapshot. */
  lsn: number | null;
  /** Commit LSN of the previous transaction, for Debezium's `sequence`. */
  lastCommitLsn: number | null;
  /** Streamed changes with provide.transaction.metadata: counts each event it makes. */
  transaction?: TransactionBlockSource | null;
}

/**
 * Hands out the `transaction` block of each event a change makes, counting the event
 * (transaction-metadata.ts); asked once per event, in the order the events go out.
 */
export interface TransactionBlockSource {
  next(): TransactionBlock;
}

export interface EventContext {
  serverName: string;
  database: string;
  tombstonesOnDelete: boolean;
  provideTransactionMetadata: boolean;
  /**
   * Where BEGIN and END events go, `<topic.prefix>.<topic.transaction>`; when left out,
   * `<serverName>.transaction` (Debezium's default topic.transaction).
   */
  transactionTopic?: string;
  sourcePartition: SourcePartition;
  /** Processing time for the envelope's ts_ms (injected clock). */
  nowMs(): number;
}

function source(
  ctx: EventContext,
  table: TableSchema,
  pos: ChangePosition,
): Record<string, unknown> {
  return {
    version: CONNECTOR_VERSION,
    connector: 'postgresql',
    name: ctx.serverName,
    ts_ms: Math.floor(pos.commitTimeMicros / 1000),
    snapshot: pos.snapshot,
    db: ctx.database,
    sequence: sequence(pos.lastCommitLsn, pos.lsn),
    schema: table.id.schema,
    table: table.id.table,
    txId: pos.txId,
    lsn: pos.lsn,
    xmin: null,
  };
}

/**
 * Debezium's `sequence`, JSON of [last commit LSN, this LSN] as strings. Built by hand:
 * JSON.stringify of a fresh array per event was a tenth of the event path's time.
 */
function sequence(lastCommitLsn: number | null, lsn: number | null): string {
  const last = lastCommitLsn === null ? 'null' : `"${lastCommitLsn}"`;
  return `[${last},${lsn === null ? 'null' : `"${lsn}"`}]`;
}

const PLACEHOLDERS_SCHEMA = Schemas.array(Schemas.string());

/**
 * The header naming the required columns `before` holds placeholders in (Postgres
 * sent them as null: not part of the old row it sends), by field name, or null when there
 * are none.
 */
function placeholderHeaders(table: TableSchema, before: Tuple): Header[] | undefined {
  const names: string[] = [];
  for (const c of table.columns)
    if (!c.optional && before[c.position] === null) names.push(c.field);
  return names.length === 0
    ? undefined
    : [{ key: BEFORE_PLACEHOLDERS_HEADER, value: names, schema: PLACEHOLDERS_SCHEMA }];
}

/** A delete's record, with the placeholder header when its old row lacks columns. */
function deleteRecord(
  ctx: EventContext,
  table: TableSchema,
  key: unknown,
  value: unknown,
  before: Tuple,
  offset: SourceOffset,
  tsMs: number,
): SourceRecord {
  const r = record(ctx, table, key, value, offset, tsMs);
  const headers = placeholderHeaders(table, before);
  // Only such deletes get the extra property: every other record keeps one shape.
  return headers === undefined ? r : { ...r, headers };
}

function record(
  ctx: EventContext,
  table: TableSchema,
  key: unknown,
  value: unknown,
  offset: SourceOffset,
  tsMs: number,
  keySchema: Schema | null = table.keySchema,
): SourceRecord {
  return {
    topic: table.topic,
    keySchema,
    key,
    valueSchema: value === null ? null : table.envelopeSchema,
    value,
    timestamp: tsMs,
    sourcePartition: ctx.sourcePartition,
    sourceOffset: offset,
  };
}

function envelope(
  ctx: EventContext,
  op: Op,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  src: Record<string, unknown>,
  pos: ChangePosition,
  tsMs: number,
): Record<string, unknown> {
  return {
    before,
    after,
    source: src,
    transaction: ctx.provideTransactionMetadata && pos.transaction ? pos.transaction.next() : null,
    op,
    ts_ms: tsMs,
  };
}

/** The records of one row change (1 to 4 of them), in the order they must be produced. */
export function changeRecords(
  ctx: EventContext,
  table: TableSchema,
  op: 'c' | 'u' | 'd' | 'r',
  before: Tuple | null,
  after: Tuple | null,
  pos: ChangePosition,
  offset: SourceOffset,
): SourceRecord[] {
  const tsMs = ctx.nowMs();
  // One source block for the change's records: they describe the same change.
  const src = source(ctx, table, pos);
  if (op === 'd') {
    if (!before) return [];
    const key = rowKey(table, before);
    const out = [
      deleteRecord(
        ctx,
        table,
        key,
        envelope(ctx, 'd', rowValue(table, before), null, src, pos, tsMs),
        before,
        offset,
        tsMs,
      ),
    ];
    if (ctx.tombstonesOnDelete && key !== null)
      out.push(record(ctx, table, key, null, offset, tsMs));
    return out;
  }
  if (!after) return [];
  const afterRow = rowValue(table, after);
  const key = rowKey(table, after);
  if (op === 'u' && before && table.keySchema) {
    const oldKey = rowKey(table, before);
    if (!sameKey(oldKey, key)) {
      const beforeRow = rowValue(table, before);
      const out = [
        deleteRecord(
          ctx,
          table,
          oldKey,
          envelope(ctx, 'd', beforeRow, null, src, pos, tsMs),
          before,
          offset,
          tsMs,
        ),
      ];
      if (ctx.tombstonesOnDelete) out.push(record(ctx, table, oldKey, null, offset, tsMs));
      out.push(
        record(ctx, table, key, envelope(ctx, 'c', null, afterRow, src, pos, tsMs), offset, tsMs),
      );
      return out;
    }
  }
  const beforeRow = op === 'u' && before ? rowValue(table, before) : null;
  return [
    record(ctx, table, key, envelope(ctx, op, beforeRow, afterRow, src, pos, tsMs), offset, tsMs),
  ];
}

/**
 * The maker of a snapshot's read events (op r) for one table at one position. All
 * its records share one source block and `offset`: records are immutable by
 * convention (connect-record.ts), and sharing leaves a queued row less to keep alive.
 * The source block is frozen, which lets JsonConverter write its bytes once for all
 * of them (JsonByteWriter.frozenStruct).
 */
export function readRecordMaker(
  ctx: EventContext,
  table: TableSchema,
  pos: ChangePosition,
  offset: SourceOffset,
): (row: Tuple) => SourceRecord {
  const src = Object.freeze(source(ctx, table, pos));
  return (row) => {
    const tsMs = ctx.nowMs();
    const value = envelope(ctx, 'r', null, rowValue(table, row), src, pos, tsMs);
    return record(ctx, table, rowKey(table, row), value, offset, tsMs);
  };
}

/** A truncate event (op t): no key, no before/after. */
export function truncateRecord(
  ctx: EventContext,
  table: TableSchema,
  pos: ChangePosition,
  offset: SourceOffset,
): SourceRecord {
  const tsMs = ctx.nowMs();
  return record(
    ctx,
    table,
    null,
    envelope(ctx, 't', null, null, source(ctx, table, pos), pos, tsMs),
    offset,
    tsMs,
    null,
  );
}

function sameKey(a: Record<string, unknown> | null, b: Record<string, unknown> | null): boolean {
  if (a === null || b === null) return a === b;
  for (const k of Object.keys(a)) {
    const x = a[k];
    const y = b[k];
    if (x instanceof Uint8Array && y instanceof Uint8Array) {
      if (Buffer.compare(x, y) !== 0) return false;
    } else if (x !== y) return false;
  }
  return true;
}
