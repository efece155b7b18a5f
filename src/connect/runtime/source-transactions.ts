/**
 * Where an exactly-once source task's transactions end (KIP-618's transaction
 * boundaries), decided for WorkerSourceTask:
 *
 *   poll       every batch a poll returns is one transaction (Kafka's default);
 *   interval   a transaction is committed once `transaction.boundary.interval.ms`
 *              (default offset.flush.interval.ms) passed since the last commit, checked
 *              after each poll, an empty one too;
 *   connector  the task says, through the TransactionContext: commit or abort after
 *              the current batch, or right after a given record. An abort drops the
 *              records of the transaction, and their offsets are still committed (in a
 *              transaction of their own), so the task does not read them again.
 *
 * At stop (and at pause) the open transaction is committed, except with connector
 * boundaries, where only a commit the task asked for is made.
 *
 * The runner asks `afterRecord(record)` for every polled record, in poll order, and
 * `afterBatch(now)` after each poll; an answer is the action to take at that point.
 * As in Kafka Connect's WorkerTransactionContext, a task may mark several records,
 * and asking both to commit and to abort the same batch or record fails the task
 * (an IllegalStateException there: guessing which was meant could lose data).
 */
import type { SourceRecord } from '../api/connect-record.ts';
import type { TransactionContext } from '../api/source-task.ts';

export type TransactionBoundary = 'poll' | 'interval' | 'connector';
export type TransactionAction = 'commit' | 'abort';

export class TransactionBoundaries {
  private commitBatch = false;
  private abortBatch = false;
  private readonly commitRecords = new Set<SourceRecord>();
  private readonly abortRecords = new Set<SourceRecord>();
  private lastCommit: number;

  constructor(
    readonly boundary: TransactionBoundary,
    private readonly intervalMs: number,
    now: number,
  ) {
    this.lastCommit = now;
  }

  /** The context handed to the task: only with connector-defined boundaries (as Kafka). */
  context(): TransactionContext | null {
    if (this.boundary !== 'connector') return null;
    return {
      commitTransaction: (record?: SourceRecord) => {
        if (record === undefined) this.commitBatch = true;
        else this.commitRecords.add(record);
      },
      abortTransaction: (record?: SourceRecord) => {
        if (record === undefined) this.abortBatch = true;
        else this.abortRecords.add(record);
      },
    };
  }

  /** Throws when the task asked both to commit and to abort at `record`. */
  afterRecord(record: SourceRecord): TransactionAction | null {
    if (this.commitRecords.size === 0 && this.abortRecords.size === 0) return null;
    const commit = this.commitRecords.delete(record);
    const abort = this.abortRecords.delete(record);
    if (commit && abort)
      throw new Error(
        `Connector requested both commit and abort of same record against topic/partition ${record.topic}/${record.kafkaPartition ?? null}`,
      );
    return abort ? 'abort' : commit ? 'commit' : null;
  }

  /** Throws when the task asked both to commit and to abort the batch. */
  afterBatch(now: number, hadRecords: boolean): TransactionAction | null {
    switch (this.boundary) {
      case 'poll':
        return hadRecords ? 'commit' : null;
      case 'interval':
        if (now < this.lastCommit + this.intervalMs) return null;
        this.lastCommit = now;
        return 'commit';
      case 'connector': {
        const { commitBatch, abortBatch } = this;
        this.commitBatch = false;
        this.abortBatch = false;
        if (commitBatch && abortBatch)
          throw new Error('Connector requested both commit and abort of same transaction');
        return abortBatch ? 'abort' : commitBatch ? 'commit' : null;
      }
    }
  }

  /** At stop or pause: commit what is open, or (connector boundaries) do what the task asked. */
  final(now: number): TransactionAction | null {
    return this.boundary === 'connector' ? this.afterBatch(now, false) : 'commit';
  }
}
