/**
 * Which streamed transactions may be confirmed to Postgres (the slot's flushed LSN).
 *
 * A transaction is confirmable when (1) its Commit was received, (2) every record it
 * produced was acknowledged by the broker (commitRecord), (3) the offsets the runtime
 * stored cover its last record, and (4) every transaction before it is confirmable.
 * (3) is checked against what the runtime really stored (read back at commit time), so
 * the LSN confirmed never runs ahead of the offset store even if acknowledgements
 * arrive between the runtime's offset write and its commit() call. A transaction that
 * produced no record (only uncaptured tables changed) needs only (1) and (4).
 *
 * Entries are keyed by the Commit's LSN (`lsn_commit` in every streamed record's
 * offset) and kept in WAL order. After a reconnect Postgres re-sends transactions
 * from the confirmed position: their Commits arrive again and are ignored here (the
 * change source skips their records). Snapshot and heartbeat records carry no
 * lsn_commit of their own transaction and are not tracked.
 *
 * Called from the task only, on the event loop; no I/O.
 */
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import type { CompletedTransaction } from './change-event-source.ts';
import type { Lsn } from './lsn.ts';
import type { StoredPosition } from './start-plan.ts';

interface Entry {
  commitLsn: Lsn;
  /** Null until the Commit arrives. */
  endLsn: Lsn | null;
  emitted: number;
  acked: number;
  /** lsn_proc of the last record emitted: the stored offset must reach it. */
  lastProc: Lsn;
}

export class CommitTracker {
  private readonly entries: Entry[] = [];
  private readonly byCommit = new Map<Lsn, Entry>();
  /** Commit LSN of the last Commit accepted; older ones are re-sends. */
  private lastCommitSeen: Lsn = -1;

  /** Records handed to the queue (streamed changes only are tracked). */
  emitted(records: readonly SourceRecord[]): void {
    for (const r of records) {
      const commitLsn = r.sourceOffset.lsn_commit;
      if (typeof commitLsn !== 'number') continue;
      const e = this.entry(commitLsn);
      e.emitted++;
      const proc = r.sourceOffset.lsn_proc;
      if (typeof proc === 'number' && proc > e.lastProc) e.lastProc = proc;
    }
  }

  committed(tx: CompletedTransaction): void {
    if (tx.commitLsn <= this.lastCommitSeen) return;
    this.lastCommitSeen = tx.commitLsn;
    this.entry(tx.commitLsn).endLsn = tx.endLsn;
  }

  acknowledged(record: SourceRecord): void {
    const commitLsn = record.sourceOffset.lsn_commit;
    if (typeof commitLsn !== 'number') return;
    const e = this.byCommit.get(commitLsn);
    if (e) e.acked++;
  }

  /**
   * The end LSN of the last transaction that may be confirmed given the stored
   * position, or null if none; confirmed entries are forgotten.
   */
  takeConfirmable(stored: StoredPosition | null): Lsn | null {
    let confirmable: Lsn | null = null;
    let n = 0;
    for (const e of this.entries) {
      if (e.endLsn === null || e.acked < e.emitted) break;
      if (e.emitted > 0 && !covers(stored, e)) break;
      confirmable = e.endLsn;
      n++;
    }
    for (const e of this.entries.splice(0, n)) this.byCommit.delete(e.commitLsn);
    return confirmable;
  }

  /** Transactions received but not yet confirmed. */
  get pending(): number {
    return this.entries.length;
  }

  private entry(commitLsn: Lsn): Entry {
    let e = this.byCommit.get(commitLsn);
    if (!e) {
      e = { commitLsn, endLsn: null, emitted: 0, acked: 0, lastProc: 0 };
      this.byCommit.set(commitLsn, e);
      this.entries.push(e);
    }
    return e;
  }
}

function covers(stored: StoredPosition | null, e: Entry): boolean {
  if (stored?.kind !== 'position' || stored.lsnCommit === null) return false;
  if (stored.lsnCommit !== e.commitLsn) return stored.lsnCommit > e.commitLsn;
  return (stored.lsnProc ?? -1) >= e.lastProc;
}
