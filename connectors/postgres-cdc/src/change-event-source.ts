/**
 * The streaming loop's heart: pgoutput messages in, Debezium records out, with the
 * table schemas kept current from Relation messages.
 *
 * Ordering: records come out in WAL order. Most messages are handled synchronously;
 * a Relation message needs two catalog lookups (types, NOT NULL and primary key), so
 * while one is pending, later messages wait in `backlog` and are handled, in order,
 * once it completes. The caller learns about emitted records through `emit`, and about
 * finished transactions through `onCommit` (the task uses it to know which end LSN
 * becomes confirmable once the transaction's records are committed).
 *
 * Offsets (Debezium's names): every record of a streamed change carries
 *   { lsn, lsn_proc: this change's LSN, lsn_commit: its transaction's commit LSN,
 *     txId, ts_usec: commit time, messageType }
 * so a restart can skip the changes of a partly delivered transaction up to lsn_proc.
 * When one change becomes several records (delete + tombstone, key change), all but
 * the last carry lsn_proc = LSN - 1, so a restart from any of them repeats the change.
 *
 * Transaction metadata (provide.transaction.metadata, transaction-metadata.ts): the
 * first emitted change of a transaction is preceded by its BEGIN record, and its
 * Commit brings the END record, both in the transaction (lsn_commit) like its changes:
 *   BEGIN  { lsn: the Begin's, lsn_proc: first change's LSN - 1, messageType BEGIN }
 *          a restart from it repeats every change of the transaction, not the BEGIN
 *   END    { lsn = lsn_proc: the Commit message's, messageType COMMIT }
 *          past every change, so the slot is confirmed only once END is stored too
 * Every streamed record's offset then holds the transaction's running counts, those
 * after its own change (records that repeat the change on restart, lsn_proc = LSN - 1,
 * hold the counts before it), so a restart numbers the repeated changes as before.
 *
 * Logical decoding messages (logical-decoding-message.ts). The LSN pgoutput gives a
 * message is the *end* of its WAL record, where the next record starts, while a
 * change's LSN is the start of its own record: the change or Commit right after a
 * message has the message's LSN. So a message's place in the stream is its LSN - 1
 * (past every earlier record, before the next; its own record starts further back).
 * A transactional message is part of its transaction like a change at that place (its
 * offset { lsn = lsn_proc: LSN - 1, lsn_commit: the transaction's }, its place in the
 * count, skipped on resume the same way); `source.lsn` shows the LSN itself, as
 * Debezium does. A non-transactional one stands alone in WAL order, between
 * transactions, and is handled as a transaction of its own that commits at once, with
 * commit LSN LSN - 1 and end LSN its LSN (Postgres sends it again only when it starts
 * decoding before that):
 *   { lsn = lsn_proc: the message's LSN, lsn_commit: its LSN - 1, txId null,
 *     messageType MESSAGE }
 * A restart from its offset skips it and every transaction that committed before it;
 * one whose prefix is filtered out still goes to onCommit, so the slot can move past it.
 *
 * Failures: a change that cannot become records (a value its column mapping cannot
 * represent, see UnrepresentableValueError) stops the source for good: every later
 * message is ignored, so no record and no Commit of that transaction or any after it
 * gets out, and nothing past the change can be confirmed to Postgres. The error is
 * thrown from accept() (the stream reports it as a decode error, which is fatal), or,
 * when the change was waiting in the backlog, handed to onError as the same decode
 * error. A Relation message bringing a column of a type with no mapping (while
 * include.unknown.datatypes is false) is fatal in the same way. A failed catalog lookup
 * goes to onError as it is (retried by the caller).
 */
import type pg from 'pg';
import type { OffsetValue, SourceOffset, SourceRecord } from '../../../src/connect/api/index.ts';
import { StreamingEventCounts } from './debezium-metrics.ts';
import {
  type ChangePosition,
  changeRecords,
  type EventContext,
  truncateRecord,
} from './event-builder.ts';
import {
  MESSAGE_DATA_COLLECTION,
  MESSAGE_TYPE,
  type MessagePosition,
  MessagePrefixFilter,
  messageRecord,
  messageSchemas,
} from './logical-decoding-message.ts';
import type { Lsn } from './lsn.ts';
import type { PgoutputMessage, Tuple } from './pgoutput-decoder.ts';
import { ReplicationStreamError } from './replication-stream.ts';
import type { TableFilter } from './table-filter.ts';
import { buildTableSchema, readCatalogColumns, type TableSchema } from './table-schema.ts';
import {
  type BoundaryContext,
  beginRecord,
  dataCollection,
  endRecord,
  OFFSET_TRANSACTION_ID,
  type ResumedTransaction,
  resumedTransaction,
  TransactionCounts,
  transactionId,
  transactionTopic,
} from './transaction-metadata.ts';
import type { MappingModes } from './type-mapping.ts';
import type { TypeRegistry } from './type-registry.ts';
import { UnknownDatatypeError } from './unknown-datatypes.ts';

export interface CompletedTransaction {
  xid: number;
  commitLsn: Lsn;
  endLsn: Lsn;
  /** Records emitted for it (0 when nothing captured changed). */
  records: number;
  /** Its commit time in Postgres (0 when its Begin was not seen); for metrics only. */
  commitTimeMicros?: number;
  /** A non-transactional logical decoding message, not a database transaction. */
  message?: true;
}

export interface ChangeEventSourceOptions {
  context: EventContext;
  catalog: pg.Client;
  registry: TypeRegistry;
  modes: MappingModes;
  filter: TableFilter;
  topicPrefix: string;
  skippedOperations: ReadonlySet<string>;
  emit(records: SourceRecord[]): void;
  onCommit(tx: CompletedTransaction): void;
  onError(error: unknown): void;
  /**
   * Sees each table schema a Relation message makes, before any record of that table
   * is emitted (the task marks the topics of tables without a key here).
   */
  onTable?(table: TableSchema): void;
  /**
   * Resume point: skip changes of transaction `commitLsn` at or before `lsnProc`, and
   * take up that transaction's counts (no second BEGIN) when it names them.
   */
  resumeAfter?: ResumePoint | null;
  /** Change messages seen and filtered out, for Debezium's streaming metrics. */
  events?: StreamingEventCounts;
  /** message.prefix.include.list / exclude.list; every prefix when absent. */
  messageFilter?: MessagePrefixFilter;
  /**
   * Sees each change's records at its place in the stream, before they go out (signals
   * and the incremental snapshot's deduplication); what it returns goes out just before
   * them, in the change's transaction (a window's reads at its close watermark).
   */
  onChange?(change: ObservedChange): SourceRecord[] | undefined;
}

/** A change as onChange sees it. */
export interface ObservedChange {
  table: TableSchema;
  op: 'c' | 'u' | 'd';
  records: readonly SourceRecord[];
  /** An operation of skipped.operations: its records do not go out. */
  skipped: boolean;
  lsn: Lsn;
  txId: number | null;
  commitTimeMicros: number;
  /** The offset of the change (without transaction counts). */
  offset: SourceOffset;
  /**
   * With provide.transaction.metadata: the transaction's counts before the change, which
   * records that repeat it on restart carry (a blocking snapshot's reads); else null.
   */
  counts: SourceOffset | null;
}

/** Where a restart (or a reconnect) takes up the stream: the last record handed on. */
export interface ResumePoint {
  commitLsn: Lsn;
  lsnProc: Lsn;
  /** The counts of that record's transaction, when it carried transaction metadata. */
  transaction?: ResumedTransaction;
}

/** The resume point a record's offset gives, or null when it names no streamed change. */
export function resumePointOf(offset: SourceOffset): ResumePoint | null {
  const commitLsn = offset.lsn_commit;
  const lsnProc = offset.lsn_proc;
  if (typeof commitLsn !== 'number' || typeof lsnProc !== 'number') return null;
  const transaction = resumedTransaction(offset);
  return transaction ? { commitLsn, lsnProc, transaction } : { commitLsn, lsnProc };
}

interface OpenTransaction {
  xid: number;
  commitLsn: Lsn;
  commitTimeMicros: number;
  records: number;
  /** The Begin message's LSN (BEGIN's id and offset). */
  beginLsn: Lsn;
  /** With provide.transaction.metadata: the running counts. */
  counts: TransactionCounts | null;
  /** Whether its BEGIN went out (here, or before the restart this resumes). */
  begun: boolean;
}

export class ChangeEventSource {
  readonly tables = new Map<number, TableSchema>();
  private tx: OpenTransaction | null = null;
  private lastCommitLsn: Lsn | null = null;
  private backlog: Array<{ m: PgoutputMessage; lsn: Lsn }> | null = null;
  private failed = false;
  private readonly events: StreamingEventCounts;
  private readonly messageFilter: MessagePrefixFilter;

  constructor(private readonly o: ChangeEventSourceOptions) {
    this.events = o.events ?? new StreamingEventCounts();
    this.messageFilter = o.messageFilter ?? new MessagePrefixFilter({ include: [], exclude: [] });
  }

  /** Hand over one message (ReplicationStream's onMessage). */
  accept(m: PgoutputMessage, lsn: Lsn): void {
    if (this.failed) return;
    if (this.backlog) {
      this.backlog.push({ m, lsn });
      return;
    }
    if (m.tag === 'relation') {
      this.applyRelationThenDrain(m, []);
      return;
    }
    try {
      this.handle(m, lsn);
    } catch (error) {
      this.failed = true;
      throw error;
    }
  }

  /** Holds later messages in `backlog` until the relation is applied, then handles them. */
  private applyRelationThenDrain(
    m: Extract<PgoutputMessage, { tag: 'relation' }>,
    backlog: Array<{ m: PgoutputMessage; lsn: Lsn }>,
  ): void {
    this.backlog = backlog;
    this.applyRelation(m).then(
      () => {
        try {
          this.drain();
        } catch (error) {
          this.failed = true;
          this.o.onError(new ReplicationStreamError('decode', message(error), { cause: error }));
        }
      },
      (error) => {
        if (!(error instanceof UnknownDatatypeError)) return this.o.onError(error);
        // The same WAL would bring the same column again: fatal, like a decode error.
        this.failed = true;
        this.o.onError(new ReplicationStreamError('decode', error.message, { cause: error }));
      },
    );
  }

  private drain(): void {
    const pending = this.backlog ?? [];
    this.backlog = null;
    for (let i = 0; i < pending.length; i++) {
      const { m, lsn } = pending[i];
      if (m.tag === 'relation') {
        // Another schema change: keep the rest queued behind it.
        this.applyRelationThenDrain(m, pending.slice(i + 1));
        return;
      }
      this.handle(m, lsn);
    }
  }

  private async applyRelation(m: Extract<PgoutputMessage, { tag: 'relation' }>): Promise<void> {
    const id = { schema: m.schema, table: m.name };
    if (!this.o.filter.includesTable(id)) {
      this.tables.delete(m.relationOid);
      return;
    }
    for (const c of m.columns) await this.o.registry.resolve(c.typeOid);
    const catalog = await readCatalogColumns(this.o.catalog, m.relationOid);
    const table = buildTableSchema({
      topicPrefix: this.o.topicPrefix,
      id,
      relationOid: m.relationOid,
      replicaIdentity: m.replicaIdentity,
      columns: m.columns,
      catalog,
      registry: this.o.registry,
      modes: this.o.modes,
      filter: this.o.filter,
    });
    this.o.onTable?.(table);
    this.tables.set(m.relationOid, table);
  }

  private handle(m: PgoutputMessage, lsn: Lsn): void {
    switch (m.tag) {
      case 'begin':
        this.tx = this.open(m, lsn);
        return;
      case 'commit': {
        const tx = this.tx;
        if (tx?.begun && tx.counts && !this.delivered(tx, lsn)) this.end(tx, lsn);
        this.tx = null;
        this.lastCommitLsn = m.commitLsn;
        this.o.onCommit({
          xid: tx?.xid ?? 0,
          commitLsn: m.commitLsn,
          endLsn: m.endLsn,
          records: tx?.records ?? 0,
          commitTimeMicros: tx?.commitTimeMicros ?? 0,
        });
        return;
      }
      case 'insert':
        this.change(m.relationOid, 'c', null, m.after, lsn, 'INSERT');
        return;
      case 'update':
        this.change(m.relationOid, 'u', m.before, m.after, lsn, 'UPDATE');
        return;
      case 'delete':
        this.change(m.relationOid, 'd', m.before, null, lsn, 'DELETE');
        return;
      case 'truncate': {
        this.events.seen += m.relationOids.length;
        if (this.o.skippedOperations.has('t')) {
          this.events.filtered += m.relationOids.length;
          return;
        }
        for (const oid of m.relationOids) {
          const table = this.tables.get(oid);
          if (!table) this.events.filtered++;
          if (!table || this.skip(lsn)) continue;
          const prior = this.tx?.counts?.offsetFields() ?? null;
          const out = [
            truncateRecord(
              this.o.context,
              table,
              this.position(lsn, table),
              this.offset(lsn, 'TRUNCATE'),
            ),
          ];
          this.deliver(out, lsn, prior);
        }
        return;
      }
      case 'message':
        if (m.transactional && this.tx) this.transactionalMessage(m, lsn);
        else this.standaloneMessage(m, lsn);
        return;
      default:
        return;
    }
  }

  /** A logical decoding message of the open transaction: one of its events. */
  private transactionalMessage(m: Extract<PgoutputMessage, { tag: 'message' }>, lsn: Lsn): void {
    // Its place among the transaction's changes (see the header).
    const at = lsn - 1;
    if (!this.messageFilter.includes(m.prefix) || this.skip(at)) return;
    const tx = this.tx as OpenTransaction;
    const prior = tx.counts?.offsetFields() ?? null;
    const counts = tx.counts;
    const record = this.messageRecord(m, {
      lsn,
      txId: tx.xid,
      tsMs: Math.floor(tx.commitTimeMicros / 1000),
      lastCommitLsn: this.lastCommitLsn,
      transaction: counts
        ? counts.event(MESSAGE_DATA_COLLECTION, transactionId(counts.xid, lsn))
        : null,
      nowMs: this.o.context.nowMs(),
      offset: this.offset(at, MESSAGE_TYPE),
    });
    this.deliver([record], at, prior);
  }

  /**
   * A non-transactional logical decoding message: a unit of its own, committed at once
   * (see the header). Skipped when a restart or reconnect resumes at or after it.
   */
  private standaloneMessage(m: Extract<PgoutputMessage, { tag: 'message' }>, lsn: Lsn): void {
    const r = this.o.resumeAfter;
    const commitLsn = lsn - 1;
    const delivered = !!r && commitLsn <= r.commitLsn;
    let records = 0;
    if (this.messageFilter.includes(m.prefix) && !delivered) {
      const nowMs = this.o.context.nowMs();
      const record = this.messageRecord(m, {
        lsn,
        txId: null,
        tsMs: nowMs,
        // Debezium's last completely processed LSN is the message's own by now.
        lastCommitLsn: lsn,
        transaction: null,
        nowMs,
        offset: {
          lsn,
          lsn_proc: lsn,
          lsn_commit: commitLsn,
          txId: null,
          ts_usec: nowMs * 1000,
          messageType: MESSAGE_TYPE,
        },
      });
      records = 1;
      this.o.emit([record]);
    }
    this.lastCommitLsn = lsn;
    this.o.onCommit({ xid: 0, commitLsn, endLsn: lsn, records, message: true });
  }

  /** A message's record, with what every message of this source shares. */
  private messageRecord(
    m: Extract<PgoutputMessage, { tag: 'message' }>,
    pos: Omit<MessagePosition, 'topicPrefix' | 'database' | 'sourcePartition'>,
  ): SourceRecord {
    return messageRecord(
      messageSchemas(this.o.modes.binaryHandlingMode ?? 'bytes'),
      m.prefix,
      m.content,
      {
        ...pos,
        topicPrefix: this.o.topicPrefix,
        database: this.o.context.database,
        sourcePartition: this.o.context.sourcePartition,
      },
    );
  }

  private change(
    oid: number,
    op: 'c' | 'u' | 'd',
    before: Tuple | null,
    after: Tuple | null,
    lsn: Lsn,
    messageType: string,
  ): void {
    const table = this.tables.get(oid);
    this.events.seen++;
    const skipped = this.o.skippedOperations.has(op);
    // A skipped operation still goes to onChange (a signal is one even with
    // skipped.operations=c, as in Debezium), but none of its records goes out.
    if (!table || (skipped && !this.o.onChange)) {
      this.events.filtered++;
      return;
    }
    if (skipped) this.events.filtered++;
    if (this.skip(lsn)) return;
    const prior = this.tx?.counts?.offsetFields() ?? null;
    const offset = this.offset(lsn, messageType);
    const position = this.position(lsn, table);
    const out = changeRecords(
      this.o.context,
      table,
      op,
      before,
      after,
      // Records never sent must not take a place in the transaction's counts.
      skipped ? { ...position, transaction: null } : position,
      offset,
    );
    const ahead = this.o.onChange?.({
      table,
      op,
      records: out,
      skipped,
      lsn,
      txId: this.tx?.xid ?? null,
      commitTimeMicros: this.tx?.commitTimeMicros ?? 0,
      offset,
      counts: prior,
    });
    const sent = skipped ? [] : out;
    this.deliver(ahead && ahead.length > 0 ? [...ahead, ...sent] : sent, lsn, prior);
  }

  /**
   * Emits the records of one change at `lsn`, after its transaction's BEGIN when they
   * are its first. `prior`: the transaction's counts before the change (null without
   * transaction metadata).
   */
  private deliver(out: SourceRecord[], lsn: Lsn, prior: Record<string, OffsetValue> | null): void {
    this.count(out.length);
    if (out.length === 0) return;
    // Records of one change share its LSN. Only the last may say the change is done
    // (lsn_proc = its LSN): if the runtime stored the offset of a delete but not yet
    // of its tombstone, a restart must send the whole change again, not skip it.
    // Records that share an offset (a window's reads) share its copy; reads released at
    // a close watermark come with lsn_proc set already (incremental-snapshot.ts).
    let given: SourceOffset | null = null;
    let made: SourceOffset | null = null;
    for (let i = 0; i < out.length - 1; i++) {
      const offset = out[i].sourceOffset;
      if (prior === null && offset.lsn_proc === lsn - 1) continue;
      if (offset !== given) {
        given = offset;
        made = { ...offset, lsn_proc: lsn - 1, ...prior };
      }
      out[i] = { ...out[i], sourceOffset: made as SourceOffset };
    }
    const tx = this.tx;
    const counts = tx?.counts;
    if (!tx || !counts) {
      this.o.emit(out);
      return;
    }
    const last = out.length - 1;
    out[last] = {
      ...out[last],
      sourceOffset: { ...out[last].sourceOffset, ...counts.offsetFields() },
    };
    if (!tx.begun) {
      tx.begun = true;
      const begin = beginRecord(this.boundary(tx), transactionId(tx.xid, tx.beginLsn), {
        ...this.offset(tx.beginLsn, 'BEGIN'),
        lsn_proc: lsn - 1,
        [OFFSET_TRANSACTION_ID]: String(tx.xid),
      });
      this.count(1);
      this.o.emit([begin, ...out]);
      return;
    }
    this.o.emit(out);
  }

  private open(m: Extract<PgoutputMessage, { tag: 'begin' }>, lsn: Lsn): OpenTransaction {
    const tx: OpenTransaction = {
      xid: m.xid,
      commitLsn: m.finalLsn,
      commitTimeMicros: m.commitTimeMicros,
      records: 0,
      beginLsn: lsn,
      counts: null,
      begun: false,
    };
    if (!this.o.context.provideTransactionMetadata) return tx;
    // The transaction a restart resumes inside: its BEGIN went out before, and its
    // counts go on from the stored ones.
    const r = this.o.resumeAfter;
    const resumed =
      r?.commitLsn === m.finalLsn && r.transaction?.id === String(m.xid) ? r.transaction : null;
    tx.counts = resumed ? TransactionCounts.resumed(m.xid, resumed) : new TransactionCounts(m.xid);
    tx.begun = resumed !== null;
    return tx;
  }

  /** The END record, at the Commit message (`lsn`). */
  private end(tx: OpenTransaction, lsn: Lsn): void {
    const counts = tx.counts as TransactionCounts;
    const offset = { ...this.offset(lsn, 'COMMIT'), ...counts.offsetFields() };
    this.count(1);
    this.o.emit([endRecord(this.boundary(tx), transactionId(tx.xid, lsn), counts, offset)]);
  }

  private boundary(tx: OpenTransaction): BoundaryContext {
    return {
      topic:
        this.o.context.transactionTopic ??
        transactionTopic(this.o.context.serverName, 'transaction'),
      sourcePartition: this.o.context.sourcePartition,
      commitTimeMicros: tx.commitTimeMicros,
      nowMs: this.o.context.nowMs(),
    };
  }

  /** Whether the record at `lsn` of the resume transaction was handed on before the restart. */
  private delivered(tx: OpenTransaction, lsn: Lsn): boolean {
    const r = this.o.resumeAfter;
    return (
      !!r && (tx.commitLsn < r.commitLsn || (tx.commitLsn === r.commitLsn && lsn <= r.lsnProc))
    );
  }

  /**
   * True while a transaction is open or a schema lookup holds messages back: records
   * may still come for WAL the stream has already received.
   */
  get busy(): boolean {
    return this.tx !== null || this.backlog !== null;
  }

  /**
   * Changes already delivered before the resume point: whole transactions that
   * committed before it (Postgres re-sends everything after its confirmed position,
   * which may lag the stored offset), and the resume transaction up to lsn_proc.
   */
  private skip(lsn: Lsn): boolean {
    return this.tx !== null && this.delivered(this.tx, lsn);
  }

  private count(n: number): void {
    if (this.tx) this.tx.records += n;
  }

  private position(lsn: Lsn, table: TableSchema): ChangePosition {
    const tx = this.tx;
    const counts = tx?.counts;
    return {
      commitTimeMicros: tx?.commitTimeMicros ?? 0,
      snapshot: 'false',
      txId: tx?.xid ?? null,
      lsn,
      lastCommitLsn: this.lastCommitLsn,
      // Only built when events carry it: this runs once per change.
      transaction: counts
        ? {
            next: () => counts.event(dataCollection(table.id), transactionId(counts.xid, lsn)),
          }
        : null,
    };
  }

  private offset(lsn: Lsn, messageType: string): SourceOffset {
    const tx = this.tx;
    return {
      lsn,
      lsn_proc: lsn,
      lsn_commit: tx?.commitLsn ?? lsn,
      txId: tx?.xid ?? null,
      ts_usec: tx?.commitTimeMicros ?? 0,
      messageType,
    };
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
