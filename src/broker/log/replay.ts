/**
 * Replaying a partition from its start to its current end, for the broker's own
 * stores that rebuild their state from an internal topic at start-up
 * (__consumer_offsets, __transaction_state): the log is read in chunks of whole
 * batches, and each batch is handed over with its header, in offset order. Batches a
 * concurrent retention or cleaning moved below the log start are left out.
 */
import { type BatchHeader, iterateBatches, readBatchHeader } from '../../protocol/record-batch.ts';
import type { PartitionLog } from './partition-log.ts';

/** Bytes read per step; whole batches are returned, so any size works. */
const REPLAY_CHUNK_BYTES = 4 * 1024 * 1024;

export interface ReplayedBatch {
  header: BatchHeader;
  /** The chunk holding the batch, and where the batch starts in it (for decodeRecords). */
  records: Buffer;
  position: number;
}

export function* replayPartition(log: PartitionLog): Generator<ReplayedBatch> {
  let next = log.earliestOffset();
  const end = log.latestOffset();
  while (next < end) {
    const { records } = log.read(next, REPLAY_CHUNK_BYTES, true);
    if (records.length === 0) return;
    for (const { position } of iterateBatches(records)) {
      const header = readBatchHeader(records, position);
      next = header.baseOffset + header.lastOffsetDelta + 1;
      if (next <= log.earliestOffset()) continue;
      yield { header, records, position };
    }
  }
}
