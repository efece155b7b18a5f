/**
 * Validation of produced record batches before they are appended, as Kafka's
 * LogValidator does for magic v2, without copying or re-encoding anything.
 *
 * Per batch: a whole v2 header inside the buffer, CRC-32C over attributes..end, size
 * within max.message.bytes, at least one record, lastOffsetDelta = recordCount - 1
 * (what every producer writes; offsets are assigned from it). On compacted topics the
 * records are decoded (decompressing if needed) because every record must have a
 * key: that is the only case in which the broker looks inside a batch on append.
 *
 * Failures are LogErrors with the Kafka error a Produce response carries:
 * CORRUPT_MESSAGE (bad framing or CRC), MESSAGE_TOO_LARGE (one batch too big),
 * RECORD_LIST_TOO_LARGE (the request bigger than a segment), INVALID_RECORD.
 */
import {
  ATTR_CONTROL,
  batchAttributes,
  batchLastOffsetDelta,
  batchMaxTimestamp,
  batchRecordCount,
  CorruptRecordError,
  checkBatch,
  decodeRecords,
} from '../../protocol/record-batch.ts';
import { LogError, type RecordError } from './errors.ts';
import type { AppendedBatch } from './segment.ts';

export interface ValidationLimits {
  maxMessageBytes: number;
  segmentBytes: number;
  compacted: boolean;
  /** `<topic>-<partition>`, for record errors' messages. */
  topicPartition?: string;
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
 * A compacted topic's records need keys. Every keyless record of the batch is named
 * (record_errors, Produce v8+), so a client fails only those records, as Kafka's
 * LogValidator reports them; the batch is refused whole, as Kafka refuses it.
 */
function requireKeys(buf: Buffer, pos: number, topicPartition: string): void {
  let records: ReturnType<typeof decodeRecords>;
  try {
    records = decodeRecords(buf, pos);
  } catch (e) {
    if (e instanceof CorruptRecordError) throw new LogError('CORRUPT_MESSAGE', e.message);
    throw e;
  }
  const errors: RecordError[] = [];
  records.forEach((r, batchIndex) => {
    if (r.key === null) {
      errors.push({
        batchIndex,
        message: `Compacted topic cannot accept message without key in topic partition ${topicPartition}`,
      });
    }
  });
  if (errors.length === 0) return;
  const shown = errors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`)
    .join(', ');
  throw new LogError(
    'INVALID_RECORD',
    `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    errors,
  );
}
