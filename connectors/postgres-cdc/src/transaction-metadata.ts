/**
 * Debezium's transaction metadata (provide.transaction.metadata=true): BEGIN and END
 * events on the transaction topic, and the `transaction` block of each change event.
 *
 *   topic  `<topic.prefix>.<topic.transaction>` (Debezium's default delimiter ".",
 *          topic.transaction "transaction": `PostgreSQL_server.transaction`)
 *   key    io.debezium.connector.common.TransactionMetadataKey { id }
 *   value  io.debezium.connector.common.TransactionMetadataValue
 *          { status BEGIN|END, id, event_count (null on BEGIN),
 *            data_collections (null on BEGIN; on END [{ data_collection, event_count }]),
 *            ts_ms: the transaction's commit time }
 *   block  event.block { id, total_order, data_collection_order } in every streamed
 *          change event: its 1-based position in its transaction, and among that
 *          table's events in it. Snapshot events have none, as in Debezium.
 *
 * Ids as Debezium's Postgres connector forms them (PostgresTransactionMonitor):
 * `<xid>:<lsn>`, the lsn being the WAL position of that record's own message (the
 * Begin's, the change's, the Commit's). BEGIN, the changes and END of one transaction
 * therefore share the `<xid>` part only; offsets name the transaction by `<xid>`.
 *
 * Counting, as Debezium's TransactionContext: one per change event, not per record (a
 * tombstone is not counted; a primary-key change counts its delete and its create).
 * Only events that are emitted count: skipped operations and excluded tables do not.
 * BEGIN goes out just before the first emitted event of a transaction and END at its
 * Commit, so a transaction that emitted nothing has neither. (Debezium sends both at
 * the Begin and Commit messages even then; pgoutput leaves out transactions that
 * change no published table, so the difference shows only for tables the publication
 * holds and the connector's filters exclude.)
 *
 * Crash and restart: every streamed record's offset holds the running counts in
 * Debezium's TransactionContext keys, `transaction_id` (the xid) and
 * `transaction_data_collection_order_<schema>.<table>` (that table's events so far;
 * the total is their sum). A task resuming inside a transaction (change-event-source.ts)
 * takes them up from its stored offset: the numbering continues and no second BEGIN
 * is sent.
 */
import {
  type OffsetValue,
  type Schema,
  Schemas,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
} from '../../../src/connect/api/index.ts';

export const TRANSACTION_KEY_SCHEMA: Schema = Schemas.struct([['id', Schemas.string()]], {
  name: 'io.debezium.connector.common.TransactionMetadataKey',
  version: 1,
});

const EVENT_COLLECTION_SCHEMA: Schema = Schemas.struct(
  [
    ['data_collection', Schemas.string()],
    ['event_count', Schemas.int64()],
  ],
  { name: 'event.collection', version: 1, optional: true },
);

export const TRANSACTION_VALUE_SCHEMA: Schema = Schemas.struct(
  [
    ['status', Schemas.string()],
    ['id', Schemas.string()],
    ['event_count', Schemas.int64({ optional: true })],
    ['data_collections', Schemas.array(EVENT_COLLECTION_SCHEMA, { optional: true })],
    ['ts_ms', Schemas.int64()],
  ],
  { name: 'io.debezium.connector.common.TransactionMetadataValue', version: 1 },
);

/** Debezium's offset keys (TransactionContext). */
export const OFFSET_TRANSACTION_ID = 'transaction_id';
const OFFSET_COLLECTION_ORDER_PREFIX = 'transaction_data_collection_order_';

/** The `transaction` block of one change event. */
export interface TransactionBlock {
  id: string;
  total_order: number;
  data_collection_order: number;
}

/** A transaction's counts as a stored offset left them. */
export interface ResumedTransaction {
  /** The xid, as `transaction_id` holds it. */
  id: string;
  perCollection: ReadonlyMap<string, number>;
}

export function transactionTopic(topicPrefix: string, topicTransaction: string): string {
  return `${topicPrefix}.${topicTransaction}`;
}

/** Debezium's name of a table as a data collection: `<schema>.<table>`. */
export function dataCollection(id: { schema: string; table: string }): string {
  return `${id.schema}.${id.table}`;
}

/** Debezium's Postgres transaction id of a record at `lsn`. */
export function transactionId(xid: number, lsn: number): string {
  return `${xid}:${lsn}`;
}

/** The transaction counts in a stored offset, if it names a transaction. */
export function resumedTransaction(offset: SourceOffset): ResumedTransaction | undefined {
  const id = offset[OFFSET_TRANSACTION_ID];
  if (id === undefined || id === null || id === '') return undefined;
  const perCollection = new Map<string, number>();
  for (const [key, value] of Object.entries(offset)) {
    if (!key.startsWith(OFFSET_COLLECTION_ORDER_PREFIX)) continue;
    const n = Number(value);
    if (Number.isSafeInteger(n) && n > 0)
      perCollection.set(key.slice(OFFSET_COLLECTION_ORDER_PREFIX.length), n);
  }
  return { id: String(id), perCollection };
}

/**
 * The running counts of one open transaction (Debezium's TransactionContext). Owned by
 * the change event source; one per transaction, dropped at its Commit.
 */
export class TransactionCounts {
  private total = 0;
  private readonly perCollection = new Map<string, number>();

  constructor(readonly xid: number) {}

  /** Counts taken up from a stored offset of the same transaction. */
  static resumed(xid: number, from: ResumedTransaction): TransactionCounts {
    const counts = new TransactionCounts(xid);
    for (const [c, n] of from.perCollection) {
      counts.perCollection.set(c, n);
      counts.total += n;
    }
    return counts;
  }

  /** Counts one event of `collection` and gives its block. */
  event(collection: string, id: string): TransactionBlock {
    this.total++;
    const order = (this.perCollection.get(collection) ?? 0) + 1;
    this.perCollection.set(collection, order);
    return { id, total_order: this.total, data_collection_order: order };
  }

  /** The offset keys that let a restart take the counts up where they are now. */
  offsetFields(): Record<string, OffsetValue> {
    const out: Record<string, OffsetValue> = { [OFFSET_TRANSACTION_ID]: String(this.xid) };
    for (const [c, n] of this.perCollection) out[OFFSET_COLLECTION_ORDER_PREFIX + c] = n;
    return out;
  }

  get eventCount(): number {
    return this.total;
  }

  dataCollections(): Array<{ data_collection: string; event_count: number }> {
    return [...this.perCollection].map(([c, n]) => ({ data_collection: c, event_count: n }));
  }
}

/** What a BEGIN or END record needs besides the counts. */
export interface BoundaryContext {
  topic: string;
  sourcePartition: SourcePartition;
  /** Commit time of the transaction, epoch µs (Debezium's ts_ms of both events). */
  commitTimeMicros: number;
  /** Record timestamp (processing time), as change records have. */
  nowMs: number;
}

export function beginRecord(ctx: BoundaryContext, id: string, offset: SourceOffset): SourceRecord {
  return boundaryRecord(ctx, id, offset, {
    status: 'BEGIN',
    id,
    event_count: null,
    data_collections: null,
    ts_ms: Math.floor(ctx.commitTimeMicros / 1000),
  });
}

export function endRecord(
  ctx: BoundaryContext,
  id: string,
  counts: TransactionCounts,
  offset: SourceOffset,
): SourceRecord {
  return boundaryRecord(ctx, id, offset, {
    status: 'END',
    id,
    event_count: counts.eventCount,
    data_collections: counts.dataCollections(),
    ts_ms: Math.floor(ctx.commitTimeMicros / 1000),
  });
}

function boundaryRecord(
  ctx: BoundaryContext,
  id: string,
  offset: SourceOffset,
  value: Record<string, unknown>,
): SourceRecord {
  return {
    topic: ctx.topic,
    keySchema: TRANSACTION_KEY_SCHEMA,
    key: { id },
    valueSchema: TRANSACTION_VALUE_SCHEMA,
    value,
    timestamp: ctx.nowMs,
    sourcePartition: ctx.sourcePartition,
    sourceOffset: offset,
  };
}
