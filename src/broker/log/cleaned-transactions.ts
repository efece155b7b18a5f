/**
 * The transactions a cleaning walks through (Kafka's CleanedTransactionMetadata):
 * which data batches belong to aborted transactions, which COMMIT/ABORT markers may
 * go, and which aborted-transaction index entries the cleaned segments keep.
 *
 * The cleaner walks every batch of the cleaned segments in offset order, from the log
 * start, and tells this class about each one *before* deciding its fate, so a batch
 * counts as "seen" in the pass that removes it. Rules (Kafka's):
 *   - A transactional data batch of a producer with an aborted transaction open at
 *     its offset (an index entry whose firstOffset has been reached and whose ABORT
 *     marker has not) is aborted: its records go.
 *   - A marker is kept while some batch of its transaction was seen in this pass. It
 *     becomes deletable when none was: the cleaner then treats it like a tombstone
 *     (a delete horizon of clean time + delete.retention.ms, removed by a cleaning
 *     after that). So a marker outlives its transaction's records by at least one
 *     cleaning and delete.retention.ms, and a read_committed reader that read the
 *     records before they went still finds the marker that ends them.
 *   - An ABORT marker that is kept keeps its index entry; a deletable one loses it at
 *     once (its records are gone, so readers have nothing to drop, and a later COMMIT
 *     of the same producer must not be read as aborted once the marker is gone).
 *   - A control batch emptied by an earlier cleaning is deletable; other control
 *     types (not COMMIT or ABORT) are always kept.
 *
 * Only decided transactions are walked: the cleaner never goes past the last stable
 * offset. One instance per cleaning, used on the broker thread.
 */
import type { AbortedTxn } from './transaction-index.ts';

/** What a control batch is, for the cleaner. */
export type ControlKind = 'commit' | 'abort' | 'empty' | 'other';

interface OpenAborted {
  txn: AbortedTxn;
  /** Some batch of the transaction was seen in this pass. */
  seen: boolean;
}

export class CleanedTransactions {
  /** Index entries not reached yet, by increasing firstOffset. */
  private readonly upcoming: AbortedTxn[];
  private next = 0;
  /** producer id -> its aborted transaction reached and not yet ended by its marker. */
  private readonly openAborted = new Map<number, OpenAborted>();
  /** Producers with a batch of a non-aborted transaction seen since their last marker. */
  private readonly openCommitted = new Set<number>();
  /** Entries of ABORT markers kept since the last takeKeptEntries(). */
  private kept: AbortedTxn[] = [];

  /** `aborted`: the index entries of every transaction that may have records in the walked range. */
  constructor(aborted: readonly AbortedTxn[]) {
    const byMarker = new Map<number, AbortedTxn>();
    for (const e of aborted) byMarker.set(e.lastOffset, e);
    this.upcoming = [...byMarker.values()].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** A data batch: whether it belongs to an aborted transaction (its records go). */
  onDataBatch(producerId: number, transactional: boolean, lastOffset: number): boolean {
    this.reach(lastOffset);
    if (!transactional) return false;
    const open = this.openAborted.get(producerId);
    if (open !== undefined) {
      open.seen = true;
      return true;
    }
    this.openCommitted.add(producerId);
    return false;
  }

  /** A control batch: whether it may be deleted (once its delete horizon has passed). */
  onControlBatch(producerId: number, offset: number, kind: ControlKind): boolean {
    this.reach(offset);
    switch (kind) {
      case 'abort': {
        const open = this.openAborted.get(producerId);
        this.openAborted.delete(producerId);
        // Batches of this transaction that no index entry covered (an index lost
        // outside recovery's sight) were kept as committed: the marker must stay, or
        // producer state rebuilt from the log would see their transaction never end.
        const unindexed = this.openCommitted.delete(producerId);
        if (open?.seen) {
          this.kept.push(open.txn);
          return false;
        }
        return !unindexed;
      }
      case 'commit':
        return !this.openCommitted.delete(producerId);
      case 'empty':
        return true;
      case 'other':
        return false;
    }
  }

  /** The index entries of the ABORT markers kept since the last call, in marker order. */
  takeKeptEntries(): AbortedTxn[] {
    const kept = this.kept;
    this.kept = [];
    return kept;
  }

  /** Opens every aborted transaction whose first record is at or before `offset`. */
  private reach(offset: number): void {
    while (this.next < this.upcoming.length && this.upcoming[this.next]!.firstOffset <= offset) {
      const txn = this.upcoming[this.next++]!;
      if (!this.openAborted.has(txn.producerId))
        this.openAborted.set(txn.producerId, { txn, seen: false });
    }
  }
}
