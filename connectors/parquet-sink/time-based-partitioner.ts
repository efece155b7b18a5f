/**
 * TimeBasedPartitioner: the folder is `path.format` applied to the record's time,
 * floored to `partition.duration.ms` in `timezone` (Confluent's rule: floor the local
 * time, so a one-day duration starts folders at local midnight).
 *
 * Timestamp extractors (`timestamp.extractor`):
 *   Record       the Kafka record timestamp (deterministic: part of the record)
 *   RecordField  `timestamp.field` of the value: epoch ms (number/bigint) or an ISO-8601
 *                string; dotted names reach into nested structs (deterministic)
 *   Wallclock    the task's clock when the record is written. NOT deterministic: a
 *                replay after a crash may put records in other folders, so files of
 *                the replayed range can differ from the first attempt's
 * Formatting goes through Intl (slow); the last bucket's text is cached because
 * records of a partition arrive in nearly increasing time.
 */
import type { Clock, SinkRecord } from '../../src/connect/api/index.ts';
import { type Partitioner, PartitionerError } from './partitioner.ts';
import { PathFormatter } from './path-format.ts';

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
      `unknown timestamp.extractor '${name}'; use Record, RecordField or Wallclock`,
    );
  }
  return kind;
}

export class TimeBasedPartitioner implements Partitioner {
  private readonly formatter: PathFormatter;
  private readonly extractor: TimestampExtractorKind;
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
  }

  recordTime(record: SinkRecord): number | undefined {
    switch (this.extractor) {
      case 'Record':
        return record.timestamp ?? undefined;
      case 'Wallclock':
        return this.clock.now();
      case 'RecordField':
        return fieldTime(record, this.settings.timestampField);
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

function fieldTime(record: SinkRecord, path: string): number {
  let v: unknown = record.value;
  for (const part of path.split('.')) {
    if (v === null || v === undefined || typeof v !== 'object') {
      v = undefined;
      break;
    }
    v = (v as Record<string, unknown>)[part];
  }
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') {
    const parsed = Date.parse(v);
    if (Number.isFinite(parsed)) return parsed;
  }
  if (v instanceof Date) return v.getTime();
  throw new PartitionerError(
    `timestamp.field '${path}' of ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset} is not a timestamp (got ${JSON.stringify(v) ?? 'nothing'})`,
  );
}
