/**
 * `transaction.boundary=connector` for the CDC task (KIP-618): each database
 * transaction becomes one Kafka transaction. Called on every polled batch, it asks the
 * runtime's TransactionContext to commit right after the last record of each
 * database transaction whose Commit has arrived, so a reader with
 * isolation.level=read_committed sees a database transaction all at once or not at
 * all. A database transaction larger than `max.batch.size` records is cut at batch
 * ends instead (one Kafka transaction per batch while it lasts), which keeps any
 * transaction well inside transaction.timeout.ms. Snapshot rows and heartbeats are
 * committed per batch.
 *
 * Streamed records carry their transaction's Commit LSN (`lsn_commit`); the stream
 * hands records over before the Commit message, so the last record of a batch ends its
 * transaction only once `committed(lsn)` was called for it. When the Commit comes
 * after the batch was returned, the next poll ends the transaction first
 * (`endPending`: a batch commit with no records) before it takes more; only when
 * the Commit and the next transaction's first records both arrive while that poll
 * waits do the two share one Kafka transaction (still all-or-nothing, in order).
 */
import type { SourceRecord, TransactionContext } from '../../../src/connect/api/index.ts';

export class DatabaseTransactionBoundaries {
  /** Commit LSNs whose Commit arrived, not yet ended by a batch (in WAL order). */
  private readonly committedLsns = new Set<number>();
  /** Records of the open Kafka transaction, for the max.batch.size cut. */
  private open = 0;
  /** The Commit LSN of the database transaction left open by the last batch. */
  private openLsn: number | null = null;

  constructor(
    private readonly context: TransactionContext,
    private readonly maxBatchSize: number,
  ) {}

  /** The stream received the Commit of the transaction with this Commit LSN. */
  committed(commitLsn: number): void {
    this.committedLsns.add(commitLsn);
  }

  /**
   * At the start of a poll: true when the database transaction the last batch left
   * open has committed since; the Kafka transaction is then ended after this (empty)
   * poll, and the poll should return no records.
   */
  endPending(): boolean {
    const lsn = this.openLsn;
    if (lsn === null || !this.committedLsns.has(lsn)) return false;
    this.context.commitTransaction();
    this.committedLsns.delete(lsn);
    this.openLsn = null;
    this.open = 0;
    return true;
  }

  /** Marks where the runtime ends transactions in a batch the task is about to return. */
  mark(records: readonly SourceRecord[]): void {
    // Commits of transactions that emitted no record (only uncaptured tables changed).
    if (this.committedLsns.size > 1024) this.committedLsns.clear();
    this.openLsn = null;
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as SourceRecord;
      this.open++;
      const lsn = commitLsnOf(record);
      if (lsn === null) continue;
      const next = i + 1 < records.length ? commitLsnOf(records[i + 1] as SourceRecord) : undefined;
      const ends = next === undefined ? this.committedLsns.has(lsn) : next !== lsn;
      if (ends) {
        this.context.commitTransaction(record);
        this.committedLsns.delete(lsn);
        this.open = 0;
      }
    }
    // Snapshot rows, heartbeats, or a database transaction that outgrew a batch.
    const last = records[records.length - 1];
    if (this.open === 0 || last === undefined) return;
    const lastLsn = commitLsnOf(last);
    if (lastLsn === null || this.open >= this.maxBatchSize) {
      this.context.commitTransaction();
      this.open = 0;
    } else {
      this.openLsn = lastLsn;
    }
  }
}

function commitLsnOf(record: SourceRecord): number | null {
  const lsn = record.sourceOffset.lsn_commit;
  return typeof lsn === 'number' ? lsn : null;
}
