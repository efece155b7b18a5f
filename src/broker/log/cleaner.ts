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
 *    segment is rewritten; the ABORT marker stays.
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
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
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
  const aborted = abortedBatches(log, range);
  const mapped = buildOffsetMap(range, firstDirtyOffset, map, aborted);
  const endOffset = mapped.end;
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
  const deleteHorizon = now + log.config.deleteRetentionMs;
  const lastBatchOfProducer = lastBatchPerProducer(toClean);
  for (const segment of toClean) {
    await yieldToIo();
    if (!log.segments.includes(segment)) continue; // retention deleted it meanwhile
    const cleanedPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.cleaned'));
    const written = rewriteSegment(
      segment,
      cleanedPath,
      map,
      now,
      deleteHorizon,
      lastBatchOfProducer,
      aborted,
      result,
    );
    result.bytesBefore += segment.size;
    if (written === undefined) {
      result.bytesAfter += segment.size;
      continue;
    }
    const swapPath = join(log.dir, segmentFileName(segment.baseOffset, '.log.swap'));
    renameSync(cleanedPath, swapPath);
    fsyncDir(log.dir);
    if (log.swapInCleaned([segment], swapPath)) {
      result.segmentsRewritten++;
      result.bytesAfter += written;
    }
  }
  return result;
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

function abortedBatches(log: PartitionLog, range: CleanRange): AbortedBatches {
  const entries = log.abortedTransactions(log.logStartOffset, range.firstUncleanableOffset);
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

/**
 * Writes the segment's cleaned bytes to `cleanedPath` (fsynced, closed) and returns
 * their length, or returns undefined and writes nothing when cleaning would not change
 * the segment. Memory stays bounded whatever the segment size: the file is opened at
 * the first batch that changes, the unchanged prefix before it is copied from the
 * segment in chunks, and output is flushed every few megabytes.
 */
function rewriteSegment(
  segment: LogSegment,
  cleanedPath: string,
  map: OffsetMap,
  now: number,
  newHorizon: number,
  lastBatchOfProducer: Map<number, number>,
  isAborted: AbortedBatches,
  result: CleanResult,
): number | undefined {
  const out = new CleanedSegmentWriter(segment, cleanedPath);
  try {
    segment.forEachBatch((buf, at, filePosition) =>
      cleanBatch(
        buf,
        at,
        filePosition,
        out,
        map,
        now,
        newHorizon,
        lastBatchOfProducer,
        isAborted,
        result,
      ),
    );
    return out.finish();
  } catch (e) {
    out.abandon();
    throw e;
  }
}

function cleanBatch(
  buf: Buffer,
  at: number,
  filePosition: number,
  out: CleanedSegmentWriter,
  map: OffsetMap,
  now: number,
  newHorizon: number,
  lastBatchOfProducer: Map<number, number>,
  isAborted: AbortedBatches,
  result: CleanResult,
): void {
  const header = readBatchHeader(buf, at);
  const size = 12 + header.batchLength;
  if (header.control) {
    out.keep(buf.subarray(at, at + size));
    return;
  }
  const records = decodeRecords(buf, at);
  result.recordsRead += records.length;
  const horizonPassed = header.hasDeleteHorizon && now >= header.baseTimestamp;
  const aborted = header.transactional && isAborted(header.producerId, header.baseOffset);
  const kept = records.filter((r) => {
    if (aborted) return false;
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
    out.keep(buf.subarray(at, at + size));
    return;
  }
  out.change(filePosition);
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
}

const FLUSH_BYTES = 4 * 1024 * 1024;

/**
 * The `.log.cleaned` file of one segment, created only once a batch changes. Output is
 * copied into one buffer and written when it fills: the batches it is given are views
 * of the segment's read chunk, which the next chunk overwrites (forEachBatch).
 */
class CleanedSegmentWriter {
  private fd: number | undefined;
  private out: Buffer | undefined;
  private used = 0;
  private written = 0;

  constructor(
    private readonly segment: LogSegment,
    private readonly path: string,
  ) {}

  /** An unchanged batch. Before the first change it needs no copy: change() copies the prefix. */
  keep(batch: Buffer): void {
    if (this.fd !== undefined) this.push(batch);
  }

  /** The batch at `filePosition` changes: from here on the output differs from the segment. */
  change(filePosition: number): void {
    if (this.fd !== undefined) return;
    this.fd = openSync(this.path, 'w');
    const out = Buffer.allocUnsafeSlow(FLUSH_BYTES);
    this.out = out;
    for (let pos = 0; pos < filePosition; ) {
      const read = this.segment.readInto(out, pos, Math.min(out.length, filePosition - pos));
      if (read.length === 0) throw new Error(`segment ${this.path} ends before byte ${pos}`);
      this.used = read.length;
      this.flush();
      pos += read.length;
    }
  }

  push(bytes: Buffer): void {
    const out = this.out!;
    if (this.used + bytes.length > out.length) this.flush();
    if (bytes.length > out.length) {
      this.write(bytes);
      return;
    }
    bytes.copy(out, this.used);
    this.used += bytes.length;
  }

  /** Bytes written (file fsynced and closed), or undefined when nothing changed. */
  finish(): number | undefined {
    if (this.fd === undefined) return undefined;
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
    return this.written;
  }

  abandon(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }

  private flush(): void {
    this.write(this.out!.subarray(0, this.used));
    this.used = 0;
  }

  private write(bytes: Buffer): void {
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd!, bytes, done, bytes.length - done);
    this.written += bytes.length;
  }
}
