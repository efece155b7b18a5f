/**
 * Idempotent-producer state of every partition (ProducerState), loaded on first use
 * and made to survive restarts.
 *
 * Files: `<partition dir>/<offset>.snapshot`, 20-digit zero-padded like segment names,
 * JSON of ProducerState.snapshot(offset): the state after every batch below
 * `offset`. Written atomically (temp file, fsync, rename) on clean close and
 * periodically by the broker (`snapshotAll`); the two newest are kept.
 *
 * Loading (synchronous, so a partition's first idempotent produce sees complete
 * state before any append): the newest snapshot whose offset is within
 * [log start, log end] — a snapshot beyond the log end belongs to a tail that
 * recovery truncated after a crash and is ignored — then every batch from there to
 * the log end is replayed from the batch headers (no decompression). Without a
 * snapshot the whole log is replayed. So after a crash, deduplication knows every
 * batch the log kept, which is every batch that was acknowledged under the flush
 * policy.
 *
 * Transactions: transactional batches open a producer's transaction and markers close
 * it (`onMarker`, for markers the coordinator writes and those replayed), giving the
 * partition's last stable offset. An ABORT marker also adds the transaction to the
 * aborted-transaction index of its segment (transaction-index.ts); replay re-adds
 * entries idempotently, and a segment whose index was found corrupt makes the replay
 * start at the log start, so every entry comes back.
 *
 * Single-threaded, on the broker thread. Where the lead wants it: this belongs with
 * src/broker/producer/ (it lives here because that folder has another owner).
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { readMarker } from '../../protocol/control-record.ts';
import { iterateBatches, readBatchHeader } from '../../protocol/record-batch.ts';
import type { Logger } from '../../util/logger.ts';
import { readJsonFile, writeFileAtomic } from '../log/atomic-file.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { ProducerState, type ProducerStateSnapshot } from './producer-state.ts';

const SNAPSHOT_SUFFIX = '.snapshot';
const SNAPSHOTS_KEPT = 2;
/** Read size while replaying the log tail. */
const REPLAY_READ_BYTES = 1 << 20;

interface Entry {
  log: PartitionLog;
  state: ProducerState;
  /** Log end offset of the newest snapshot on disk (or replay start), to skip unchanged partitions. */
  snapshotOffset: number;
}

export class ProducerStateStore {
  private readonly entries = new Map<PartitionLog, Entry>();

  constructor(private readonly logger: Logger) {}

  /** The partition's state, loading (and replaying) it on first use. */
  stateFor(log: PartitionLog): ProducerState {
    let entry = this.entries.get(log);
    if (entry === undefined) {
      entry = this.load(log);
      this.entries.set(log, entry);
    }
    return entry.state;
  }

  /**
   * A COMMIT or ABORT marker for `producerId` now sits at `offset` of `log`: closes
   * the producer's transaction there and indexes it when aborted.
   */
  onMarker(
    log: PartitionLog,
    producerId: number,
    producerEpoch: number,
    offset: number,
    commit: boolean,
    timestamp: number,
  ): void {
    applyMarker(this.stateFor(log), log, producerId, producerEpoch, offset, commit, timestamp);
  }

  /** The last stable offset: the first offset of the oldest open transaction, or the high watermark. */
  lastStableOffset(log: PartitionLog): number {
    const first = this.stateFor(log).firstUnstableOffset();
    return first === undefined ? log.highWatermark : Math.min(first, log.highWatermark);
  }

  /** Drops state of logs that were deleted (DeleteTopics). */
  forgetTopic(topic: string): void {
    for (const log of this.entries.keys()) if (log.topic === topic) this.entries.delete(log);
  }

  /** Writes a snapshot for every partition whose log grew since its last one. */
  snapshotAll(): void {
    for (const entry of this.entries.values()) {
      const offset = entry.log.logEndOffset;
      if (offset === entry.snapshotOffset) continue;
      try {
        writeFileAtomic(
          join(entry.log.dir, snapshotName(offset)),
          JSON.stringify(entry.state.snapshot(offset)),
        );
        entry.snapshotOffset = offset;
        removeOldSnapshots(entry.log.dir);
      } catch (err) {
        // A missing snapshot costs a longer replay on the next start, never correctness.
        this.logger.warn({ err, dir: entry.log.dir }, 'could not write a producer state snapshot');
      }
    }
  }

  private load(log: PartitionLog): Entry {
    const start = log.logStartOffset;
    const end = log.logEndOffset;
    let state = new ProducerState();
    let from = start;
    // A lost aborted-transaction index is rebuilt by replaying everything.
    const rebuildTxnIndex = log.txnIndexLost;
    for (const offset of rebuildTxnIndex ? [] : snapshotOffsets(log.dir).reverse()) {
      if (offset > end || offset < start) continue;
      const snapshot = readJsonFile(join(log.dir, snapshotName(offset))) as
        | ProducerStateSnapshot
        | undefined;
      if (
        snapshot === undefined ||
        snapshot.offset !== offset ||
        !Array.isArray(snapshot.producers)
      )
        continue;
      state = ProducerState.fromSnapshot(snapshot);
      from = offset;
      break;
    }
    const replayed = replay(log, state, from, end);
    if (rebuildTxnIndex) {
      log.markTxnIndexesRebuilt();
      this.logger.warn(
        { topic: log.topic, partition: log.partition },
        'rebuilt the aborted-transaction index from the log',
      );
    }
    if (replayed > 0) {
      this.logger.info(
        { topic: log.topic, partition: log.partition, from, to: end, batches: replayed },
        'rebuilt producer state from the log tail',
      );
    }
    return { log, state, snapshotOffset: from === end ? end : -1 };
  }
}

function replay(log: PartitionLog, state: ProducerState, from: number, end: number): number {
  let offset = from;
  let batches = 0;
  while (offset < end) {
    const { records } = log.read(offset, REPLAY_READ_BYTES, true);
    if (records.length === 0) break;
    let next = offset;
    for (const { position } of iterateBatches(records)) {
      const h = readBatchHeader(records, position);
      const last = h.baseOffset + h.lastOffsetDelta;
      if (last >= offset && h.producerId >= 0 && h.control) {
        const marker = readMarker(records, position);
        if (marker) {
          applyMarker(
            state,
            log,
            h.producerId,
            h.producerEpoch,
            h.baseOffset,
            marker.commit,
            h.maxTimestamp,
          );
          batches++;
        }
      } else if (last >= offset && h.producerId >= 0) {
        state.onAppend(
          {
            producerId: h.producerId,
            producerEpoch: h.producerEpoch,
            baseSequence: h.baseSequence,
            lastOffsetDelta: h.lastOffsetDelta,
          },
          h.baseOffset,
          h.maxTimestamp,
          h.transactional,
        );
        batches++;
      }
      next = Math.max(next, last + 1);
    }
    if (next <= offset) break;
    offset = next;
  }
  return batches;
}

function applyMarker(
  state: ProducerState,
  log: PartitionLog,
  producerId: number,
  producerEpoch: number,
  offset: number,
  commit: boolean,
  timestamp: number,
): void {
  const done = state.onMarker(producerId, producerEpoch, offset, timestamp);
  if (commit || done.firstOffset < 0) return;
  log.recordAbortedTxn({
    producerId,
    firstOffset: done.firstOffset,
    lastOffset: offset,
    lastStableOffset: state.firstUnstableOffset() ?? offset + 1,
  });
}

function snapshotName(offset: number): string {
  return `${String(offset).padStart(20, '0')}${SNAPSHOT_SUFFIX}`;
}

function snapshotOffsets(dir: string): number[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(SNAPSHOT_SUFFIX) && /^\d{20}\.snapshot$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
}

function removeOldSnapshots(dir: string): void {
  const offsets = snapshotOffsets(dir);
  for (const offset of offsets.slice(0, Math.max(0, offsets.length - SNAPSHOTS_KEPT))) {
    unlinkSync(join(dir, snapshotName(offset)));
  }
}
