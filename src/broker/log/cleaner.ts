/**
 * The compaction algorithm for one partition log (Kafka's Cleaner.doClean): keep the
 * latest record per key in the cleanable part of the log.
 *
 * 1. The cleanable range is [logStartOffset, firstUncleanableOffset): whole inactive
 *    segments, stopping at the first one holding a record newer than
 *    min.compaction.lag.ms. Its dirty part starts at the cleaner checkpoint.
 * 2. The dirty part is read into an OffsetMap: key -> offset of its latest record.
 * 3. Every segment of the cleanable range is rewritten batch by batch: a record
 *    survives when no later record with its key is in the map; a tombstone (null
 *    value) also survives until its batch's delete horizon has passed. A batch whose
 *    records all survive and that needs no horizon is copied byte for byte; otherwise
 *    it is re-encoded keeping its base offset, last offset delta, producer id, epoch,
 *    base sequence, leader epoch, codec and timestamp type, so offsets stay as they
 *    were (gaps are fine) and producer fields survive. Batches left empty are dropped,
 *    except the last batch of each producer id, kept empty (header only) as Kafka does
 *    so that producer state rebuilt from the log keeps its last sequence; control
 *    batches (transaction markers) are kept as they are.
 *
 * Tombstone horizon (KIP-534, Kafka 3.1+): the first time a cleaning keeps a batch with
 * tombstones, it sets the batch's delete-horizon attribute (bit 6) with baseTimestamp =
 * now + delete.retention.ms. A later cleaning drops tombstones whose horizon has
 * passed. The horizon thus lives in the data itself, survives restarts and needs no
 * extra file; record timestamps are unchanged (stored as deltas from the horizon).
 *
 * Swap: each rewritten segment is written to `<base>.log.cleaned`, fsynced, renamed
 * to `<base>.log.swap` (the commit point), and swapped in by
 * PartitionLog.swapInCleaned in one synchronous step. A crash before the rename leaves
 * a `.cleaned` that recovery deletes; after it, recovery completes the swap. Segments
 * whose content would not change are not rewritten.
 *
 * Runs on the broker thread, called by LogCleaner; it yields between segments so
 * produce and fetch requests are served while it works.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CompressionCodec } from '../../protocol/compression.ts';
import {
  ATTR_CONTROL,
  batchBaseOffset,
  decodeRecords,
  encodeBatch,
  PRODUCER_ID,
  type RecordInput,
  readBatchHeader,
  readInt64,
} from '../../protocol/record-batch.ts';
import { fsyncDir } from './atomic-file.ts';
import type { OffsetMap } from './offset-map.ts';
import type { PartitionLog } from './partition-log.ts';
import { type LogSegment, segmentFileName } from './segment.ts';

export interface CleanRange {
  /** Segments that may be cleaned (whole, inactive, older than the compaction lag). */
  segments: LogSegment[];
  /** First offset after them. */
  firstUncleanableOffset: number;
}

/** Inactive segments from the log start whose records are all older than the compaction lag. */
export function cleanableRange(log: PartitionLog, now: number): CleanRange {
  const all = log.segments;
  const segments: LogSegment[] = [];
  for (let i = 0; i < all.length - 1; i++) {
    const s = all[i];
    if (s.nextOffset <= log.logStartOffset) continue;
    if (s.maxTimestamp > now - log.config.minCompactionLagMs) break;
    segments.push(s);
  }
  const firstUncleanableOffset =
    segments.length === 0
      ? log.logStartOffset
      : all[all.indexOf(segments[segments.length - 1]) + 1].baseOffset;
  return { segments, firstUncleanableOffset };
}

export interface CleanResult {
  /** The next cleaning's dirty part starts here. */
  endOffset: number;
  recordsRead: number;
  recordsRemoved: number;
  tombstonesRemoved: number;
  bytesBefore: number;
  bytesAfter: number;
  segmentsRewritten: number;
  /** Earliest delete horizon left in the log, when a later cleaning has tombstones to drop. */
  earliestDeleteHorizon: number | undefined;
}

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Cleans `range` of `log` using `map` (cleared first). `firstDirtyOffset` is where the
 * previous cleaning ended.
 */
export async function cleanLog(
  log: PartitionLog,
  range: CleanRange,
  firstDirtyOffset: number,
  map: OffsetMap,
  now: number,
): Promise<CleanResult> {
  map.clear();
  const endOffset = buildOffsetMap(range, firstDirtyOffset, map);
  const result: CleanResult = {
    endOffset,
    recordsRead: 0,
    recordsRemoved: 0,
    tombstonesRemoved: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    segmentsRewritten: 0,
    earliestDeleteHorizon: undefined,
  };
  const toClean = range.segments.filter((s) => s.baseOffset < endOffset);
  if (toClean.length === 0) return result;
  // Recovery trusts byte positions before the persisted recovery point: move it past
  // what is about to be rewritten.
  await log.checkpointBeyond(range.firstUncleanableOffset);
  const deleteHorizon = now + log.config.deleteRetentionMs;
  const lastBatchOfProducer = lastBatchPerProducer(toClean);
  for (const segment of toClean) {
    await yieldToIo();
    if (!log.segments.includes(segment)) continue; // retention deleted it meanwhile
    const out = rewriteSegment(segment, map, now, deleteHorizon, lastBatchOfProducer, result);
    result.bytesBefore += segment.size;
    if (out === undefined) {
      result.bytesAfter += segment.size;
      continue;
    }
    const cleanedPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.cleaned'));
    const fd = openSync(cleanedPath, 'w');
    try {
      for (const chunk of out) writeSync(fd, chunk);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const swapPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.swap'));
    renameSync(cleanedPath, swapPath);
    fsyncDir(log.dir);
    if (log.swapInCleaned([segment], swapPath)) {
      result.segmentsRewritten++;
      result.bytesAfter += out.reduce((sum, b) => sum + b.length, 0);
    }
  }
  return result;
}

/** Maps the dirty part; returns the offset after the last batch mapped (map full stops it). */
function buildOffsetMap(range: CleanRange, firstDirtyOffset: number, map: OffsetMap): number {
  let end = firstDirtyOffset;
  for (const segment of range.segments) {
    if (segment.nextOffset <= firstDirtyOffset) continue;
    let full = false;
    segment.forEachBatch((buf, at) => {
      if (full) return;
      const header = readBatchHeader(buf, at);
      const last = header.baseOffset + header.lastOffsetDelta;
      if (last < firstDirtyOffset) return;
      if ((header.attributes & ATTR_CONTROL) === 0) {
        const records = decodeRecords(buf, at);
        if (records.some((r) => r.key !== null && !map.hasRoomFor(r.key))) {
          full = true;
          return;
        }
        for (const r of records) if (r.key !== null) map.put(r.key, r.offset);
      }
      end = last + 1;
    });
    if (full) return end;
    end = Math.max(end, segment.nextOffset);
  }
  return Math.max(end, firstDirtyOffset);
}

/** producer id -> base offset of its last batch in `segments`. */
function lastBatchPerProducer(segments: LogSegment[]): Map<number, number> {
  const last = new Map<number, number>();
  for (const segment of segments) {
    segment.forEachBatch((buf, at) => {
      const producerId = readInt64(buf, at + PRODUCER_ID);
      if (producerId >= 0) last.set(producerId, batchBaseOffset(buf, at));
    });
  }
  return last;
}

/** The segment's cleaned bytes, or undefined when cleaning would not change it. */
function rewriteSegment(
  segment: LogSegment,
  map: OffsetMap,
  now: number,
  newHorizon: number,
  lastBatchOfProducer: Map<number, number>,
  result: CleanResult,
): Buffer[] | undefined {
  const out: Buffer[] = [];
  let changed = false;
  segment.forEachBatch((buf, at) => {
    const header = readBatchHeader(buf, at);
    const size = 12 + header.batchLength;
    if (header.control) {
      out.push(buf.subarray(at, at + size));
      return;
    }
    const records = decodeRecords(buf, at);
    result.recordsRead += records.length;
    const horizonPassed = header.hasDeleteHorizon && now >= header.baseTimestamp;
    const kept = records.filter((r) => {
      if (r.key !== null) {
        const latest = map.get(r.key);
        if (latest > r.offset) return false;
      }
      if (r.value === null && horizonPassed) {
        result.tombstonesRemoved++;
        return false;
      }
      return true;
    });
    result.recordsRemoved += records.length - kept.length;
    const hasTombstones = kept.some((r) => r.value === null);
    const needsHorizon = hasTombstones && !header.hasDeleteHorizon;
    if (hasTombstones) {
      const horizon = header.hasDeleteHorizon ? header.baseTimestamp : newHorizon;
      if (result.earliestDeleteHorizon === undefined || horizon < result.earliestDeleteHorizon) {
        result.earliestDeleteHorizon = horizon;
      }
    }
    if (kept.length === records.length && !needsHorizon) {
      out.push(buf.subarray(at, at + size));
      return;
    }
    changed = true;
    const keepEmpty =
      header.producerId >= 0 && lastBatchOfProducer.get(header.producerId) === header.baseOffset;
    if (kept.length === 0 && !keepEmpty) return;
    const inputs: RecordInput[] = kept.map((r) => ({
      offsetDelta: r.offset - header.baseOffset,
      timestamp: r.timestamp,
      key: r.key,
      value: r.value,
      headers: r.headers,
    }));
    out.push(
      encodeBatch({
        baseOffset: header.baseOffset,
        records: inputs,
        codec: header.codec as CompressionCodec,
        partitionLeaderEpoch: header.partitionLeaderEpoch,
        producerId: header.producerId,
        producerEpoch: header.producerEpoch,
        baseSequence: header.baseSequence,
        transactional: header.transactional,
        logAppendTime: header.logAppendTime,
        maxTimestamp: header.maxTimestamp,
        lastOffsetDelta: header.lastOffsetDelta,
        deleteHorizon: hasTombstones
          ? header.hasDeleteHorizon
            ? header.baseTimestamp
            : newHorizon
          : undefined,
      }),
    );
  });
  return changed ? out : undefined;
}
