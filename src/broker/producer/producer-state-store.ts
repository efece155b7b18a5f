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
 * Single-threaded, on the broker thread. Where the lead wants it: this belongs with
 * src/broker/producer/ (it lives here because that folder has another owner).
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
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
    for (const offset of snapshotOffsets(log.dir).reverse()) {
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
      if (last >= offset && h.producerId >= 0 && !h.control) {
        state.onAppend(
          {
            producerId: h.producerId,
            producerEpoch: h.producerEpoch,
            baseSequence: h.baseSequence,
            lastOffsetDelta: h.lastOffsetDelta,
          },
          h.baseOffset,
          h.maxTimestamp,
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
