/**
 * What the coordinator knows of one transactional id (Kafka's TransactionMetadata):
 * its producer id and epoch, its timeout, the state of its current (or last)
 * transaction and the partitions in it.
 *
 * States and the moves between them (Kafka's TransactionState):
 *
 *   Empty ──AddPartitions/AddOffsets──> Ongoing ──EndTxn(commit)──> PrepareCommit ──markers──> CompleteCommit
 *     ^                                   │  └──EndTxn(abort), timeout, fencing──> PrepareAbort ──markers──> CompleteAbort
 *     └──────── InitProducerId ──────────────────────────────────────────────── (from Empty or Complete*)
 *
 * Complete* behave as Empty for the next transaction. Prepare* are written to the
 * transaction log before any marker, so a coordinator that restarts in one of them
 * writes the markers again and completes the transaction (markers are idempotent for
 * readers: a second marker closes nothing).
 */

export type TxnStatus =
  | 'Empty'
  | 'Ongoing'
  | 'PrepareCommit'
  | 'PrepareAbort'
  | 'CompleteCommit'
  | 'CompleteAbort'
  | 'Dead'
  | 'PrepareEpochFence';

/** The status byte of the transaction log value, as Kafka numbers them. */
export const TXN_STATUS_IDS: Readonly<Record<TxnStatus, number>> = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
};

export const TXN_STATUS_BY_ID: readonly TxnStatus[] = Object.entries(TXN_STATUS_IDS)
  .sort((a, b) => a[1] - b[1])
  .map(([name]) => name as TxnStatus);

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface TransactionMetadata {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  state: TxnStatus;
  /** Partitions of the current transaction, in the order they were added. */
  partitions: TopicPartition[];
  /** When the current transaction started (its first AddPartitions), -1 when none. */
  txnStartTimestamp: number;
  lastUpdateTimestamp: number;
  /**
   * The epoch this id had before its last InitProducerId, when that request named it
   * (KIP-360: a producer resuming after an error); -1 otherwise, and after any fencing.
   * A retry of that request, whose answer was lost, names it again and gets the
   * current epoch back instead of PRODUCER_FENCED. In memory only, as in Kafka (its
   * log value has no such field): after a restart such a retry is fenced.
   */
  lastProducerEpoch: number;
  /**
   * The producer id before the last InitProducerId (the old id after a rotation at an
   * exhausted epoch), so that a retry naming the old id is recognised; -1 when none.
   * In memory only: Kafka writes it only in the flexible v1 value, which this log
   * format does not write (transaction-log-format.ts).
   */
  previousProducerId: number;
}

/** The largest epoch: at it the producer id is exhausted and a new one is handed out. */
export const MAX_EPOCH = 32767;

export function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

export function hasPartition(meta: TransactionMetadata, tp: TopicPartition): boolean {
  return meta.partitions.some((p) => p.topic === tp.topic && p.partition === tp.partition);
}

export function isComplete(state: TxnStatus): boolean {
  return state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
}
