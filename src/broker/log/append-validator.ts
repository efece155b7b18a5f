/**
 * Validation of produced record batches before they are appended, as Kafka's
 * LogValidator does for magic v2, without copying or re-encoding anything unless the
 * topic's compression.type asks for another codec (below).
 *
 * Per batch: a whole v2 header inside the buffer, CRC-32C over attributes..end, size
 * within max.message.bytes, at least one record, lastOffsetDelta = recordCount - 1
 * (what every producer writes; offsets are assigned from it). On compacted topics the
 * records are decoded (decompressing if needed) because every record must have a
 * key, and on CreateTime topics with a message.timestamp.before/after.max.ms bound
 * because every record's timestamp must lie within it: the only cases in which the
 * broker looks inside a batch on append.
 *
 * Recompression (compression.type other than "producer"): a batch in another codec
 * than the topic's is re-encoded into a new buffer, as Kafka's LogValidator rebuilds
 * it: its records section decompressed and compressed again at the topic's level,
 * every other header field kept (producer id, epoch, base sequence, transactional
 * flag, timestamps, offset deltas), the codec bits and length set and the CRC
 * recomputed. The log then assigns offsets and stamps LogAppendTime on the result as
 * on any batch. Control batches (coordinator markers) stay as written, uncompressed.
 * A re-encoded batch is checked against max.message.bytes again, as Kafka does when
 * the size may have changed.
 *
 * Failures are LogErrors with the Kafka error a Produce response carries:
 * CORRUPT_MESSAGE (bad framing or CRC), MESSAGE_TOO_LARGE (one batch too big),
 * RECORD_LIST_TOO_LARGE (the request bigger than a segment), INVALID_RECORD,
 * INVALID_TIMESTAMP; the last two name each refused record (record_errors).
 */
import { type CompressionCodec, compress } from '../../protocol/compression.ts';
import {
  ATTR_CODEC_MASK,
  ATTR_CONTROL,
  ATTRIBUTES,
  BATCH_LENGTH,
  batchAttributes,
  batchLastOffsetDelta,
  batchMaxTimestamp,
  batchRecordCount,
  CorruptRecordError,
  checkBatch,
  decodeRecords,
  LOG_OVERHEAD,
  RECORDS,
  recordsPayload,
  rewriteCrc,
} from '../../protocol/record-batch.ts';
import { LogError, type RecordError } from './errors.ts';
import type { AppendedBatch } from './segment.ts';
import { NEVER } from './topic-config.ts';

export interface ValidationLimits {
  maxMessageBytes: number;
  segmentBytes: number;
  compacted: boolean;
  /** `<topic>-<partition>`, for record errors' messages. */
  topicPartition?: string;
  /**
   * CreateTime topics with a timestamp bound: every record's timestamp must lie in
   * [now - beforeMaxMs, now + afterMaxMs], as Kafka's LogValidator checks it.
   */
  timestamps?: { now: number; beforeMaxMs: number; afterMaxMs: number };
}

/** A record's timestamp when the producer gave none (Kafka's RecordBatch.NO_TIMESTAMP). */
const NO_TIMESTAMP = -1;

/** The timestamp bounds to check, or undefined when the topic has none (or is LogAppendTime). */
export function timestampBounds(
  config: { logAppendTime: boolean; timestampBeforeMaxMs: number; timestampAfterMaxMs: number },
  now: number,
): ValidationLimits['timestamps'] {
  if (config.logAppendTime) return undefined;
  if (config.timestampBeforeMaxMs === NEVER && config.timestampAfterMaxMs === NEVER)
    return undefined;
  return { now, beforeMaxMs: config.timestampBeforeMaxMs, afterMaxMs: config.timestampAfterMaxMs };
}

export interface ValidatedAppend {
  /** Batches in order; offsets are filled in by the log when it assigns them. */
  batches: AppendedBatch[];
  recordCount: number;
}

export function validateBatches(buf: Buffer, limits: ValidationLimits): ValidatedAppend {
  if (buf.length > limits.segmentBytes) {
    throw new LogError(
      'RECORD_LIST_TOO_LARGE',
      `${buf.length} bytes of batches exceed the segment size ${limits.segmentBytes}`,
    );
  }
  const batches: AppendedBatch[] = [];
  let recordCount = 0;
  let pos = 0;
  while (pos < buf.length) {
    const size = checkBatch(buf, pos, buf.length, true);
    if (size instanceof CorruptRecordError) {
      throw new LogError('CORRUPT_MESSAGE', `batch at byte ${pos}: ${size.message}`);
    }
    if (size > limits.maxMessageBytes) {
      throw new LogError(
        'MESSAGE_TOO_LARGE',
        `batch of ${size} bytes exceeds max.message.bytes ${limits.maxMessageBytes}`,
      );
    }
    const count = batchRecordCount(buf, pos);
    const lastOffsetDelta = batchLastOffsetDelta(buf, pos);
    if (count === 0) throw new LogError('INVALID_RECORD', `batch at byte ${pos} has no records`);
    if (lastOffsetDelta !== count - 1) {
      throw new LogError(
        'INVALID_RECORD',
        `batch at byte ${pos} has ${count} records but last offset delta ${lastOffsetDelta}`,
      );
    }
    if (limits.compacted && (batchAttributes(buf, pos) & ATTR_CONTROL) === 0) {
      requireKeys(buf, pos, limits.topicPartition ?? '');
    }
    if (limits.timestamps !== undefined && (batchAttributes(buf, pos) & ATTR_CONTROL) === 0) {
      requireTimestampsWithin(buf, pos, limits.timestamps);
    }
    batches.push({
      position: pos,
      size,
      baseOffset: 0,
      lastOffset: lastOffsetDelta,
      maxTimestamp: batchMaxTimestamp(buf, pos),
    });
    recordCount += count;
    pos += size;
  }
  return { batches, recordCount };
}

/**
 * The validated batches with every non-control batch in `target.codec`: `buf` itself
 * when none needed re-encoding, else a new buffer, with `validated`'s positions and
 * sizes updated to it.
 */
export function recompressBatches(
  buf: Buffer,
  validated: ValidatedAppend,
  target: { codec: CompressionCodec; level: number | undefined },
  limits: Pick<ValidationLimits, 'maxMessageBytes' | 'segmentBytes'>,
): Buffer {
  const differs = (b: { position: number }): boolean => {
    const attributes = batchAttributes(buf, b.position);
    return (attributes & ATTR_CONTROL) === 0 && (attributes & ATTR_CODEC_MASK) !== target.codec;
  };
  if (!validated.batches.some(differs)) return buf;
  const parts: Buffer[] = [];
  let pos = 0;
  for (const b of validated.batches) {
    let batch = buf.subarray(b.position, b.position + b.size);
    if (differs(b)) {
      batch = reencode(buf, b.position, target);
      if (batch.length > limits.maxMessageBytes) {
        throw new LogError(
          'MESSAGE_TOO_LARGE',
          `batch of ${batch.length} bytes after re-encoding to the topic's compression.type exceeds max.message.bytes ${limits.maxMessageBytes}`,
        );
      }
    }
    parts.push(batch);
    b.position = pos;
    b.size = batch.length;
    pos += batch.length;
  }
  if (pos > limits.segmentBytes) {
    throw new LogError(
      'RECORD_LIST_TOO_LARGE',
      `${pos} bytes of batches after re-encoding exceed the segment size ${limits.segmentBytes}`,
    );
  }
  return Buffer.concat(parts, pos);
}

/** The batch at `pos` with its records section in `target.codec`; a new buffer. */
function reencode(
  buf: Buffer,
  pos: number,
  target: { codec: CompressionCodec; level: number | undefined },
): Buffer {
  let records: Buffer;
  try {
    records = compress(target.codec, recordsPayload(buf, pos), target.level);
  } catch (e) {
    if (e instanceof CorruptRecordError) throw new LogError('CORRUPT_MESSAGE', e.message);
    throw e;
  }
  const out = Buffer.allocUnsafe(RECORDS + records.length);
  buf.copy(out, 0, pos, pos + RECORDS);
  records.copy(out, RECORDS);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH);
  const attributes = (batchAttributes(buf, pos) & ~ATTR_CODEC_MASK) | target.codec;
  out.writeInt16BE(attributes, ATTRIBUTES);
  rewriteCrc(out, 0);
  return out;
}

/**
 * A compacted topic's records need keys. Every keyless record of the batch is named
 * (record_errors, Produce v8+), so a client fails only those records, as Kafka's
 * LogValidator reports them; the batch is refused whole, as Kafka refuses it.
 */
function requireKeys(buf: Buffer, pos: number, topicPartition: string): void {
  const errors: RecordError[] = [];
  decodeOrCorrupt(buf, pos).forEach((r, batchIndex) => {
    if (r.key === null) {
      errors.push({
        batchIndex,
        message: `Compacted topic cannot accept message without key in topic partition ${topicPartition}`,
      });
    }
  });
  refuseRecords('INVALID_RECORD', errors);
}

/**
 * Every record's CreateTime within the topic's bounds (records without a timestamp,
 * -1, pass), else INVALID_TIMESTAMP naming each record outside, in Kafka's words.
 */
function requireTimestampsWithin(
  buf: Buffer,
  pos: number,
  bounds: NonNullable<ValidationLimits['timestamps']>,
): void {
  const earliest = bounds.now - bounds.beforeMaxMs;
  const latest = bounds.now + bounds.afterMaxMs;
  const errors: RecordError[] = [];
  decodeOrCorrupt(buf, pos).forEach((r, batchIndex) => {
    if (r.timestamp === NO_TIMESTAMP) return;
    if (r.timestamp < earliest || r.timestamp > latest) {
      errors.push({
        batchIndex,
        message: `Timestamp ${r.timestamp} of message with offset ${r.offset} is out of range. The timestamp should be within [${earliest}, ${latest}]`,
      });
    }
  });
  refuseRecords('INVALID_TIMESTAMP', errors);
}

function decodeOrCorrupt(buf: Buffer, pos: number): ReturnType<typeof decodeRecords> {
  try {
    return decodeRecords(buf, pos);
  } catch (e) {
    if (e instanceof CorruptRecordError) throw new LogError('CORRUPT_MESSAGE', e.message);
    throw e;
  }
}

/** The batch is refused whole, naming its records, as Kafka's processRecordErrors words it. */
function refuseRecords(
  kafkaError: 'INVALID_RECORD' | 'INVALID_TIMESTAMP',
  errors: RecordError[],
): void {
  if (errors.length === 0) return;
  const shown = errors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`)
    .join(', ');
  throw new LogError(
    kafkaError,
    `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    errors,
  );
}
