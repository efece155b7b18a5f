/**
 * What a cleaning keeps of each batch (Kafka's RecordFilter / BatchRetention in
 * MemoryRecords.filterTo): for a data batch, the records the offset map, the delete
 * horizon and the aborted transactions let live; for a control batch, whether the
 * marker stays, gets a delete horizon, is emptied or removed (the transaction rules
 * are in cleaned-transactions.ts). A changed batch is re-encoded with its original
 * offsets range and producer fields; a batch left empty is dropped unless it is the
 * one kept for its producer.
 *
 * Producer state: a marker is removed, or emptied, only once producer state can no
 * longer need it. A restart rebuilds producer state from the newest producer
 * snapshot (producer-state-store.ts, `<offset>.snapshot` in the partition
 * directory) and replays the log after it; a snapshot taken while the transaction
 * was open, followed by a log without its marker, would leave the transaction open
 * forever and the last stable offset stuck. So a marker at or past the newest
 * snapshot stays (without asking for another cleaning) until a later snapshot
 * covers it; with no snapshot, the replay starts at the log start and sees the
 * transaction's records gone with its marker.
 *
 * Called by cleaner.ts for every batch of a cleaning, in log order, on the broker thread.
 */
import type { CompressionCodec } from '../../protocol/compression.ts';
import { readMarker } from '../../protocol/control-record.ts';
import {
  type BatchHeader,
  decodeRecords,
  encodeBatch,
  type Record as LogRecord,
  type RecordInput,
  readBatchHeader,
} from '../../protocol/record-batch.ts';
import type { CleanedSegmentWriter } from './cleaned-segment-writer.ts';
import type { CleanedTransactions, ControlKind } from './cleaned-transactions.ts';
import type { CleanResult } from './cleaner.ts';
import type { OffsetMap } from './offset-map.ts';
import type { LogSegment } from './segment.ts';

/** What every batch of one cleaning is judged against (built by cleaner.ts). */
export interface CleaningPass {
  map: OffsetMap;
  now: number;
  /** The delete horizon a batch gets when it first needs one. */
  newHorizon: number;
  kept: KeptForProducerState;
  txns: CleanedTransactions;
  /** Offset of the newest producer state snapshot; undefined when there is none. */
  producerSnapshot: number | undefined;
  result: CleanResult;
}

/**
 * The batch kept, emptied if need be, for each producer id of `segments`, so that
 * producer state rebuilt from the log keeps the producer (Kafka keeps the batch of
 * each active producer's last data offset, or its last marker when it has none): the
 * base offset of its last data batch, else of its last control batch.
 */
export type KeptForProducerState = Map<number, number>;

export function keptForProducerState(segments: LogSegment[]): KeptForProducerState {
  const lastData: KeptForProducerState = new Map();
  const lastControl: KeptForProducerState = new Map();
  for (const segment of segments) {
    segment.forEachBatch((buf, at) => {
      const h = readBatchHeader(buf, at);
      if (h.producerId >= 0) (h.control ? lastControl : lastData).set(h.producerId, h.baseOffset);
    });
  }
  for (const [producerId, offset] of lastControl) {
    if (!lastData.has(producerId)) lastData.set(producerId, offset);
  }
  return lastData;
}

function isKeptForProducerState(header: BatchHeader, pass: CleaningPass): boolean {
  return header.producerId >= 0 && pass.kept.get(header.producerId) === header.baseOffset;
}

function noteHorizon(result: CleanResult, horizon: number): void {
  if (result.earliestDeleteHorizon === undefined || horizon < result.earliestDeleteHorizon) {
    result.earliestDeleteHorizon = horizon;
  }
}

export function cleanDataBatch(
  buf: Buffer,
  at: number,
  header: BatchHeader,
  filePosition: number,
  out: CleanedSegmentWriter,
  pass: CleaningPass,
): void {
  const { map, now, result } = pass;
  const size = 12 + header.batchLength;
  const aborted = pass.txns.onDataBatch(
    header.producerId,
    header.transactional,
    header.baseOffset + header.lastOffsetDelta,
  );
  const records = decodeRecords(buf, at);
  result.recordsRead += records.length;
  const horizonPassed = header.hasDeleteHorizon && now >= header.baseTimestamp;
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
  const horizon = header.hasDeleteHorizon ? header.baseTimestamp : pass.newHorizon;
  if (hasTombstones) noteHorizon(result, horizon);
  if (kept.length === records.length && !needsHorizon) {
    out.keep(buf.subarray(at, at + size));
    return;
  }
  out.change(filePosition);
  if (kept.length === 0 && !isKeptForProducerState(header, pass)) return;
  out.push(reencode(header, kept, hasTombstones ? horizon : undefined));
}

/** A transaction marker (or another control batch): kept, given a horizon, emptied or removed. */
export function cleanControlBatch(
  buf: Buffer,
  at: number,
  header: BatchHeader,
  filePosition: number,
  out: CleanedSegmentWriter,
  pass: CleaningPass,
): void {
  const size = 12 + header.batchLength;
  const deletable = pass.txns.onControlBatch(
    header.producerId,
    header.baseOffset + header.lastOffsetDelta,
    controlKind(buf, at, header),
  );
  const keepEmpty = isKeptForProducerState(header, pass);
  if (!deletable || (header.recordCount === 0 && keepEmpty)) {
    out.keep(buf.subarray(at, at + size));
    return;
  }
  if (header.recordCount > 0 && !header.hasDeleteHorizon) {
    out.change(filePosition);
    out.push(reencode(header, decodeRecords(buf, at), pass.newHorizon));
    noteHorizon(pass.result, pass.newHorizon);
    return;
  }
  if (header.recordCount > 0 && pass.now < header.baseTimestamp) {
    out.keep(buf.subarray(at, at + size));
    noteHorizon(pass.result, header.baseTimestamp);
    return;
  }
  if (header.recordCount > 0 && !coveredBySnapshot(header, pass)) {
    out.keep(buf.subarray(at, at + size));
    return;
  }
  // Past its horizon, or an empty control batch no producer needs any more.
  out.change(filePosition);
  if (header.recordCount > 0) pass.result.markersRemoved++;
  if (keepEmpty) out.push(reencode(header, [], undefined));
}

/** Whether producer state rebuilt after a restart starts past this marker (see the header). */
function coveredBySnapshot(header: BatchHeader, pass: CleaningPass): boolean {
  return pass.producerSnapshot === undefined || pass.producerSnapshot > header.baseOffset;
}

function controlKind(buf: Buffer, at: number, header: BatchHeader): ControlKind {
  if (header.recordCount === 0) return 'empty';
  const marker = readMarker(buf, at);
  if (marker === undefined) return 'other';
  return marker.commit ? 'commit' : 'abort';
}

/** The batch with only `records`, keeping its offsets range and producer fields. */
function reencode(
  header: BatchHeader,
  records: readonly LogRecord[],
  deleteHorizon: number | undefined,
): Buffer {
  const inputs: RecordInput[] = records.map((r) => ({
    offsetDelta: r.offset - header.baseOffset,
    timestamp: r.timestamp,
    key: r.key,
    value: r.value,
    headers: r.headers,
  }));
  return encodeBatch({
    baseOffset: header.baseOffset,
    records: inputs,
    codec: header.codec as CompressionCodec,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    transactional: header.transactional,
    control: header.control,
    logAppendTime: header.logAppendTime,
    maxTimestamp: header.maxTimestamp,
    lastOffsetDelta: header.lastOffsetDelta,
    deleteHorizon,
  });
}
