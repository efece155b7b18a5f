/**
 * TimeBasedPartitioner: the folder is `path.format` applied to the record's time,
 * floored to `partition.duration.ms` in `timezone` (Confluent's rule: floor the local
 * time, so a one-day duration starts folders at local midnight).
 *
 * Timestamp extractors (`timestamp.extractor`), Confluent's three by their short or
 * class names; a custom TimestampExtractor class (which Confluent loads by name) is
 * refused by name:
 *   Record       the Kafka record timestamp (deterministic: part of the record); a
 *                record without one is an errant record, as in Confluent's sink
 *   RecordField  `timestamp.field` of the value, dotted names reaching into nested
 *                structs (record-field-path.ts), read as Confluent's
 *                RecordFieldTimestampExtractor reads it (deterministic):
 *                  struct value: by the field's schema: Timestamp (epoch ms here),
 *                    INT32/INT64 as epoch ms, STRING as epoch ms digits or ISO-8601
 *                    (iso-date-time.ts); any other type is refused
 *                  schemaless value: a number (truncated to whole ms), digits or
 *                    ISO-8601 text, a Date
 *                A field that is missing, null, of another type or unreadable text
 *                fails the task: Confluent's sink reads the time before its errant
 *                record handling, so its task fails on these too.
 *   Wallclock    the task's clock when the record is written. NOT deterministic: a
 *                replay after a crash may put records in other folders, so files of
 *                the replayed range can differ from the first attempt's
 * A record with a null value (a tombstone under behavior.on.null.values=write) has
 * the record timestamp as its time, as Confluent's TombstoneTimestampExtractor gives.
 * Formatting goes through Intl (slow); the last bucket's text is cached because
 * records of a partition arrive in nearly increasing time.
 */
import {
  type Clock,
  ConnectException,
  LogicalType,
  type SinkRecord,
} from '../../src/connect/api/index.ts';
import { parseTimestampText } from './iso-date-time.ts';
import { type Partitioner, PartitionerError } from './partitioner.ts';
import { PathFormatter } from './path-format.ts';
import { nestedField, nestedValue, pathParts } from './record-field-path.ts';

export type TimestampExtractorKind = 'Record' | 'RecordField' | 'Wallclock';

export interface TimeBasedSettings {
  pathFormat: string;
  durationMs: number;
  locale: string;
  timezone: string;
  timestampExtractor: string;
  timestampField: string;
}

const EXTRACTOR_ALIASES: Record<string, TimestampExtractorKind> = {
  Record: 'Record',
  RecordField: 'RecordField',
  Wallclock: 'Wallclock',
  'io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor':
    'Record',
  'io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordFieldTimestampExtractor':
    'RecordField',
  'io.confluent.connect.storage.partitioner.TimeBasedPartitioner$WallclockTimestampExtractor':
    'Wallclock',
};

export function extractorKind(name: string): TimestampExtractorKind {
  const kind = EXTRACTOR_ALIASES[name];
  if (!kind) {
    throw new PartitionerError(
      `unknown timestamp.extractor '${name}'; use Record, RecordField or Wallclock (Confluent's built-in extractors; custom TimestampExtractor classes are not supported)`,
    );
  }
  return kind;
}

export class TimeBasedPartitioner implements Partitioner {
  private readonly formatter: PathFormatter;
  private readonly extractor: TimestampExtractorKind;
  private readonly fieldParts: string[];
  private cachedBucket = Number.NaN;
  private cachedEnd = Number.NaN;
  private cachedPath = '';

  constructor(
    private readonly settings: TimeBasedSettings,
    private readonly clock: Clock,
  ) {
    this.formatter = new PathFormatter(settings.pathFormat, settings.timezone, settings.locale);
    this.extractor = extractorKind(settings.timestampExtractor);
    if (this.extractor === 'RecordField' && settings.timestampField === '') {
      throw new PartitionerError('timestamp.extractor=RecordField needs timestamp.field');
    }
    this.fieldParts = pathParts(settings.timestampField);
  }

  recordTime(record: SinkRecord): number | undefined {
    if (record.value === null || record.value === undefined) return record.timestamp ?? undefined;
    switch (this.extractor) {
      case 'Record':
        return record.timestamp ?? undefined;
      case 'Wallclock':
        return this.clock.now();
      case 'RecordField':
        return fieldTime(record, this.settings.timestampField, this.fieldParts);
    }
  }

  encodePartition(record: SinkRecord): string {
    const time = this.recordTime(record);
    if (time === undefined || !Number.isFinite(time)) {
      throw new PartitionerError(
        `record ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset} has no timestamp for the TimeBasedPartitioner`,
      );
    }
    // The cache holds one whole bucket [start, end), so the answer for a time never
    // depends on which records came before it (replays must partition identically).
    if (!(time >= this.cachedBucket && time < this.cachedEnd)) {
      this.cachedBucket = this.bucketStart(time);
      // 1.5 durations from the start lands inside the next bucket even when a DST
      // change makes the local day 23 or 25 hours long.
      this.cachedEnd = this.bucketStart(this.cachedBucket + this.settings.durationMs * 1.5);
      if (this.cachedEnd <= this.cachedBucket) this.cachedEnd = this.cachedBucket + 1;
      this.cachedPath = this.formatter.format(this.cachedBucket);
    }
    return this.cachedPath;
  }

  /** Start of the duration bucket holding `time`, floored in local time. */
  bucketStart(time: number): number {
    const offset = this.formatter.offsetMs(time);
    const d = this.settings.durationMs;
    return Math.floor((time + offset) / d) * d - offset;
  }
}

/** `timestamp.field` of the value as Confluent's RecordFieldTimestampExtractor reads it. */
function fieldTime(record: SinkRecord, name: string, parts: readonly string[]): number {
  const where = `${record.topic}-${record.kafkaPartition}@${record.kafkaOffset}`;
  const fail = (why: string): never => {
    throw new ConnectException(
      `timestamp.field '${name}' of ${where} ${why} (Confluent's RecordFieldTimestampExtractor fails the task here too)`,
    );
  };
  const value = record.value;
  const schema = record.valueSchema;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail('cannot be read: the value is not a struct or map');
  }
  const v = nestedValue(value, parts);
  const text = (t: string): number =>
    parseTimestampText(t) ?? fail(`is not epoch milliseconds nor ISO-8601 text: '${t}'`);
  if (schema !== null && schema !== undefined) {
    const lookup = schema.type === 'struct' ? nestedField(schema, parts) : undefined;
    if (lookup === undefined || !('found' in lookup)) return fail('is not in the value schema');
    if (v === undefined) return fail('is null');
    const fieldSchema = lookup.found.schema;
    if (fieldSchema.name === LogicalType.Timestamp) return Number(v);
    switch (fieldSchema.type) {
      case 'int32':
      case 'int64':
        return Number(v);
      case 'string':
        return text(String(v));
      default:
        return fail(
          `has type ${fieldSchema.type.toUpperCase()}, not INT32, INT64, STRING or Timestamp`,
        );
    }
  }
  if (v === undefined) return fail('is absent or null');
  if (typeof v === 'number') return Math.trunc(v); // Java's Number.longValue()
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return text(v);
  if (v instanceof Date) return v.getTime();
  return fail(`is ${Array.isArray(v) ? 'an array' : `a ${typeof v}`}, not a number, text or date`);
}
