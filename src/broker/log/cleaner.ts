/**
 * The compaction algorithm for one partition log (Kafka's Cleaner.doClean): keep the
 * latest record per key in the cleanable part of the log.
 *
 * 1. The cleanable range is [logStartOffset, firstUncleanableOffset): whole inactive
 *    segments, stopping at the first one holding a record newer than
 *    min.compaction.lag.ms, or reaching the last stable offset (an open
 *    transaction's records are never cleaned, as in Kafka). Its dirty part starts at
 *    the cleaner checkpoint.
 * 2. The dirty part is read into an OffsetMap: key -> offset of its latest record.
 *    Records of aborted transactions (the segments' .txnindex) are left out of the
 *    map, so they never supersede a committed record, and are removed when their
 *    segment is rewritten.
 * 3. Every segment of the cleanable range is rewritten batch by batch: a record
 *    survives when no later record with its key is in the map; a tombstone (null
 *    value) also survives until its batch's delete horizon has passed. A batch whose
 *    records all survive and that needs no horizon is copied byte for byte; otherwise
 *    it is re-encoded keeping its base offset, last offset delta, producer id, epoch,
 *    base sequence, leader epoch, codec and timestamp type, so offsets stay as they
 *    were (gaps are fine) and producer fields survive. Batches left empty are dropped,
 *    except, as Kafka does, so that producer state rebuilt from the log keeps each
 *    producer's last sequence and epoch: each producer id's last data batch, kept
 *    empty (header only), or its last control batch when it has no data batch here.
 * 4. Transaction markers (cleaned-transactions.ts has the rules): a COMMIT or ABORT
 *    marker stays while a batch of its transaction was seen in this cleaning; once
 *    none was, it is deletable and handled like a tombstone (below), then removed,
 *    or emptied to a header when it is the batch kept for its producer, once the
 *    newest producer state snapshot lies past it (batch-retention.ts says why). The
 *    aborted-transaction index of a rewritten segment keeps only the entries of the
 *    ABORT markers still needed, as Kafka rebuilds it for cleaned segments.
 *
 * Delete horizon (KIP-534, Kafka 3.1+): the first time a cleaning keeps a batch with
 * tombstones, or a deletable marker, it sets the batch's delete-horizon attribute
 * (bit 6) with baseTimestamp = now + delete.retention.ms. A later cleaning drops
 * tombstones and deletable markers whose horizon has passed. The horizon thus lives
 * in the data itself, survives restarts and needs no extra file; record timestamps
 * are unchanged (stored as deltas from the horizon).
 *
 * Swap: each rewritten segment is written to `<base>.log.cleaned`, fsynced; a
 * changed aborted-transaction index to `<base>.txnindex.swap` (atomically); then
 * `.log.cleaned` is renamed to `<base>.log.swap` (the commit point, for both), and
 * PartitionLog.swapInCleaned swaps them in in one synchronous step. A crash before
 * the rename leaves a `.cleaned` that recovery deletes with the `.txnindex.swap`;
 * after it, recovery completes the swap. Segments whose content would not change are
 * not rewritten.
 *
 * Runs on the broker thread, called by LogCleaner; it yields between segments so
 * produce and fetch requests are served while it works.
 */
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { ATTR_CONTROL, decodeRecords, readBatchHeader } from '../../protocol/record-batch.ts';
import { fsyncDir, writeFileAtomic } from './atomic-file.ts';
import {
  type CleaningPass,
  cleanControlBatch,
  cleanDataBatch,
  keptForProducerState,
} from './batch-retention.ts';
import { CleanedSegmentWriter } from './cleaned-segment-writer.ts';
import { CleanedTransactions } from './cleaned-transactions.ts';
import type { OffsetMap } from './offset-map.ts';
import type { PartitionLog } from './partition-log.ts';
import { type LogSegment, segmentFileName } from './segment.ts';
import { type AbortedTxn, TransactionIndex } from './transaction-index.ts';

export interface CleanRange {
  /** Segments that may be cleaned (whole, inactive, older than the compaction lag). */
  segments: LogSegment[];
  /** First offset after them. */
  firstUncleanableOffset: number;
}

/**
 * Inactive segments from the log start whose records are all older than the
 * compaction lag and below `lastStableOffset`.
 */
export function cleanableRange(
  log: PartitionLog,
  now: number,
  lastStableOffset = log.logEndOffset,
): CleanRange {
  const all = log.segments;
  const segments: LogSegment[] = [];
  for (let i = 0; i < all.length - 1; i++) {
    const s = all[i];
    if (s.nextOffset <= log.logStartOffset) continue;
    if (s.maxTimestamp > now - log.config.minCompactionLagMs) break;
    if (s.nextOffset > lastStableOffset) break;
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
  /** COMMIT/ABORT markers removed (their transaction's records gone and their horizon passed). */
  markersRemoved: number;
  bytesBefore: number;
  bytesAfter: number;
  segmentsRewritten: number;
  /** Earliest delete horizon left in the log, when a later cleaning has tombstones or markers to drop. */
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
  const abortedTxns = log.abortedTransactions(log.logStartOffset, range.firstUncleanableOffset);
  const aborted = abortedBatches(abortedTxns);
  const mapped = buildOffsetMap(range, firstDirtyOffset, map, aborted);
  const endOffset = mapped.end;
  const result: CleanResult = {
    endOffset,
    recordsRead: 0,
    recordsRemoved: 0,
    tombstonesRemoved: 0,
    markersRemoved: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    segmentsRewritten: 0,
    earliestDeleteHorizon: undefined,
  };
  const toClean = range.segments.filter((s) => s.baseOffset < endOffset);
  if (toClean.length === 0) return result;
  // Nothing cleaned before (no clean part), no key seen twice and no tombstone: no
  // record can go and none needs a delete horizon, so the segments stay as they are.
  // This is every first cleaning of a log of distinct keys, e.g. a CDC table's first
  // snapshot, which would otherwise be read and hashed a second time for nothing.
  if (
    !mapped.repeats &&
    !mapped.tombstones &&
    !mapped.aborted &&
    toClean[0]!.baseOffset >= firstDirtyOffset
  ) {
    for (const segment of toClean) result.bytesBefore += segment.size;
    result.bytesAfter = result.bytesBefore;
    result.recordsRead = mapped.records;
    return result;
  }
  // Recovery trusts byte positions before the persisted recovery point: move it past
  // what is about to be rewritten.
  await log.checkpointBeyond(range.firstUncleanableOffset);
  const pass: CleaningPass = {
    map,
    now,
    newHorizon: now + log.config.deleteRetentionMs,
    kept: keptForProducerState(toClean),
    txns: new CleanedTransactions(abortedTxns),
    producerSnapshot: newestProducerSnapshot(log.dir),
    result,
  };
  for (const segment of toClean) {
    await yieldToIo();
    if (!log.segments.includes(segment)) continue; // retention deleted it meanwhile
    const cleanedPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.cleaned'));
    const written = rewriteSegment(segment, cleanedPath, pass);
    const entries = pass.txns.takeKeptEntries();
    const indexChanged = !sameEntries(entries, segment.txnIndex.all);
    result.bytesBefore += segment.size;
    if (written === undefined) {
      // Same bytes, but entries no kept ABORT marker here needs (left by an older cleaner).
      if (indexChanged) segment.txnIndex.replace(entries);
      result.bytesAfter += segment.size;
      continue;
    }
    let txnIndexSwap: string | undefined;
    if (indexChanged) {
      txnIndexSwap = join(log.dir, segmentFileName(segment.baseOffset, '.txnindex.swap'));
      writeFileAtomic(txnIndexSwap, TransactionIndex.encode(entries));
    }
    const swapPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.swap'));
    renameSync(cleanedPath, swapPath);
    fsyncDir(log.dir);
    if (log.swapInCleaned([segment], swapPath, txnIndexSwap)) {
      result.segmentsRewritten++;
      result.bytesAfter += written;
    }
  }
  return result;
}

/**
 * The offset of the partition's newest producer state snapshot (producer-state-store.ts
 * names them `<20-digit offset>.snapshot`), where a restart's replay would start.
 */
function newestProducerSnapshot(dir: string): number | undefined {
  let newest: number | undefined;
  for (const name of readdirSync(dir)) {
    if (!/^\d{20}\.snapshot$/.test(name)) continue;
    const offset = Number(name.slice(0, 20));
    if (newest === undefined || offset > newest) newest = offset;
  }
  return newest;
}

function sameEntries(a: readonly AbortedTxn[], b: readonly AbortedTxn[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (e, i) =>
        e.producerId === b[i]!.producerId &&
        e.firstOffset === b[i]!.firstOffset &&
        e.lastOffset === b[i]!.lastOffset &&
        e.lastStableOffset === b[i]!.lastStableOffset,
    )
  );
}

interface MappedRange {
  /** The offset after the last batch mapped (a full map stops early). */
  end: number;
  records: number;
  /** Some key appeared more than once. */
  repeats: boolean;
  /** Some record had a null value. */
  tombstones: boolean;
  /** Some batch belonged to an aborted transaction. */
  aborted: boolean;
}

/** Whether a transactional batch of `producerId` at `baseOffset` belongs to an aborted transaction. */
type AbortedBatches = (producerId: number, baseOffset: number) => boolean;

function abortedBatches(entries: readonly AbortedTxn[]): AbortedBatches {
  if (entries.length === 0) return () => false;
  return (producerId, baseOffset) =>
    entries.some(
      (e) =>
        e.producerId === producerId && e.firstOffset <= baseOffset && baseOffset < e.lastOffset,
    );
}

/** Maps the dirty part of the range into `map`. */
function buildOffsetMap(
  range: CleanRange,
  firstDirtyOffset: number,
  map: OffsetMap,
  isAborted: AbortedBatches,
): MappedRange {
  let end = firstDirtyOffset;
  let records = 0;
  let repeats = false;
  let tombstones = false;
  let aborted = false;
  for (const segment of range.segments) {
    if (segment.nextOffset <= firstDirtyOffset) continue;
    let full = false;
    segment.forEachBatch((buf, at) => {
      if (full) return;
      const header = readBatchHeader(buf, at);
      const last = header.baseOffset + header.lastOffsetDelta;
      if (last < firstDirtyOffset) return;
      if (
        header.transactional &&
        !header.control &&
        isAborted(header.producerId, header.baseOffset)
      ) {
        aborted = true;
      } else if ((header.attributes & ATTR_CONTROL) === 0) {
        const batch = decodeRecords(buf, at);
        if (!map.hasRoomFor(batch.length)) {
          full = true;
          return;
        }
        records += batch.length;
        for (const r of batch) {
          if (r.value === null) tombstones = true;
          if (r.key !== null && !map.put(r.key, r.offset)) repeats = true;
        }
      }
      end = last + 1;
    });
    if (full) return { end, records, repeats, tombstones, aborted };
    end = Math.max(end, segment.nextOffset);
  }
  return { end: Math.max(end, firstDirtyOffset), records, repeats, tombstones, aborted };
}

/**
 * Writes the segment's cleaned bytes to `cleanedPath` (fsynced, closed) and returns
 * their length, or returns undefined and writes nothing when cleaning would not change
 * the segment (cleaned-segment-writer.ts).
 */
function rewriteSegment(
  segment: LogSegment,
  cleanedPath: string,
  pass: CleaningPass,
): number | undefined {
  const out = new CleanedSegmentWriter(segment, cleanedPath);
  try {
    segment.forEachBatch((buf, at, filePosition) => {
      const header = readBatchHeader(buf, at);
      if (header.control) cleanControlBatch(buf, at, header, filePosition, out, pass);
      else cleanDataBatch(buf, at, header, filePosition, out, pass);
    });
    return out.finish();
  } catch (e) {
    out.abandon();
    throw e;
  }
}
