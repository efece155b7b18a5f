/**
 * Debezium change events: the key and the value envelope of every row change,
 * exactly as Debezium's Postgres connector lays them out, so consumers written for
 * Debezium read ours.
 *
 *   key    struct `<prefix>.<schema>.<table>.Key` of the key columns, or null
 *   value  struct `<prefix>.<schema>.<table>.Envelope`:
 *            before       optional `.Value` (old row: key columns only unless REPLICA IDENTITY FULL)
 *            after        optional `.Value`
 *            source       io.debezium.connector.postgresql.Source
 *            transaction  optional event.block (provide.transaction.metadata)
 *            op           c create, u update, d delete, r read (snapshot), t truncate
 *            ts_ms        when the connector processed the event
 * Operations that become several records: delete -> delete + tombstone (null value,
 * when tombstones.on.delete), primary-key change -> delete (+ tombstone) of the old
 * key then create of the new key.
 */
import type {
  Schema,
  SourceOffset,
  SourcePartition,
  SourceRecord,
} from '../../../src/connect/api/index.ts';
import { Schemas } from '../../../src/connect/api/index.ts';
import type { Tuple } from './pgoutput-decoder.ts';
import { rowKey, rowValue, type TableSchema } from './table-schema.ts';

export const CONNECTOR_VERSION = '0.1.0';

export type Op = 'c' | 'u' | 'd' | 'r' | 't';
export type SnapshotMarker = 'true' | 'last' | 'false';

export const SOURCE_SCHEMA: Schema = Schemas.struct(
  [
    ['version', Schemas.string()],
    ['connector', Schemas.string()],
    ['name', Schemas.string()],
    ['ts_ms', Schemas.int64()],
    [
      'snapshot',
      Schemas.string({
        optional: true,
        name: 'io.debezium.data.Enum',
        version: 1,
        parameters: { allowed: 'true,last,false,incremental' },
        defaultValue: 'false',
      }),
    ],
    ['db', Schemas.string()],
    ['sequence', Schemas.string({ optional: true })],
    ['schema', Schemas.string()],
    ['table', Schemas.string()],
    ['txId', Schemas.int64({ optional: true })],
    ['lsn', Schemas.int64({ optional: true })],
    ['xmin', Schemas.int64({ optional: true })],
  ],
  { name: 'io.debezium.connector.postgresql.Source' },
);

export const TRANSACTION_BLOCK_SCHEMA: Schema = Schemas.struct(
  [
    ['id', Schemas.string()],
    ['total_order', Schemas.int64()],
    ['data_collection_order', Schemas.int64()],
  ],
  { name: 'event.block', version: 1, optional: true },
);

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
  transaction?: { id: string; totalOrder: number; dataCollectionOrder: number } | null;
}

export interface EventContext {
  serverName: string;
  database: string;
  tombstonesOnDelete: boolean;
  provideTransactionMetadata: boolean;
  sourcePartition: SourcePartition;
  /** Processing time for the envelope's ts_ms (injected clock). */
  nowMs(): number;
}

const envelopeSchemas = new WeakMap<TableSchema, Schema>();

export function envelopeSchema(table: TableSchema): Schema {
  let s = envelopeSchemas.get(table);
  if (!s) {
    s = Schemas.struct(
      [
        ['before', table.valueSchema],
        ['after', table.valueSchema],
        ['source', SOURCE_SCHEMA],
        ['transaction', TRANSACTION_BLOCK_SCHEMA],
        ['op', Schemas.string()],
        ['ts_ms', Schemas.int64({ optional: true })],
      ],
      { name: `${table.topic}.Envelope`, version: 1 },
    );
    envelopeSchemas.set(table, s);
  }
  return s;
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
    sequence: JSON.stringify([
      pos.lastCommitLsn === null ? null : String(pos.lastCommitLsn),
      pos.lsn === null ? null : String(pos.lsn),
    ]),
    schema: table.id.schema,
    table: table.id.table,
    txId: pos.txId,
    lsn: pos.lsn,
    xmin: null,
  };
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
    valueSchema: value === null ? null : envelopeSchema(table),
    value,
    timestamp: tsMs,
    sourcePartition: ctx.sourcePartition,
    sourceOffset: offset,
  };
}

function envelope(
  ctx: EventContext,
  table: TableSchema,
  op: Op,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  pos: ChangePosition,
  tsMs: number,
): Record<string, unknown> {
  const t = ctx.provideTransactionMetadata && pos.transaction ? pos.transaction : null;
  return {
    before,
    after,
    source: source(ctx, table, pos),
    transaction: t && {
      id: t.id,
      total_order: t.totalOrder,
      data_collection_order: t.dataCollectionOrder,
    },
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
  if (op === 'd') {
    if (!before) return [];
    const key = rowKey(table, before);
    const out = [
      record(
        ctx,
        table,
        key,
        envelope(ctx, table, 'd', rowValue(table, before), null, pos, tsMs),
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
        record(
          ctx,
          table,
          oldKey,
          envelope(ctx, table, 'd', beforeRow, null, pos, tsMs),
          offset,
          tsMs,
        ),
      ];
      if (ctx.tombstonesOnDelete) out.push(record(ctx, table, oldKey, null, offset, tsMs));
      out.push(
        record(ctx, table, key, envelope(ctx, table, 'c', null, afterRow, pos, tsMs), offset, tsMs),
      );
      return out;
    }
  }
  const beforeRow = op === 'u' && before ? rowValue(table, before) : null;
  return [
    record(ctx, table, key, envelope(ctx, table, op, beforeRow, afterRow, pos, tsMs), offset, tsMs),
  ];
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
    envelope(ctx, table, 't', null, null, pos, tsMs),
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
