/**
 * Partitioners: which folder (the "encoded partition") a record's file goes to, named
 * exactly as Confluent's partitioners (kafka-connect-storage-common) name it, so a
 * bucket is interchangeable with one Confluent's S3 sink wrote.
 *
 *   Default    partition=<kafka partition>
 *   Field      <f1>=<v1><directory.delim><f2>=<v2> from `partition.field.name`
 *              (field-partitioner.ts: Confluent's type rules, `f=null`, no escaping)
 *   TimeBased  `path.format` applied to the record's time floored to
 *              `partition.duration.ms` in `timezone` (see time-based-partitioner.ts)
 *   Daily      TimeBased with 'year'=YYYY/'month'=MM/'day'=dd and one day
 *   Hourly     TimeBased with 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH and one hour
 *              ('/' there is directory.delim, as in Confluent's)
 * Confluent's class names (io.confluent.connect.storage.partitioner.*) are aliases,
 * so existing connector configs run unchanged; any other class (Confluent loads custom
 * Partitioner implementations by name) is refused by name.
 *
 * Errors: PartitionerError is Confluent's PartitionException, which Confluent's S3 sink
 * reports as an errant record (the dead letter queue with errors.tolerance=all); the
 * writer turns it into a DataException. Where Confluent's task fails instead (a field
 * missing from the schema, a timestamp.field that cannot be read), the partitioner
 * throws a ConnectException, which fails the task here too.
 */
import type { Clock, SinkRecord } from '../../src/connect/api/index.ts';
import { FieldPartitioner } from './field-partitioner.ts';
import { TimeBasedPartitioner, type TimeBasedSettings } from './time-based-partitioner.ts';

export interface Partitioner {
  encodePartition(record: SinkRecord): string;
  /**
   * The time rotate.interval.ms compares (Confluent: the partitioner's timestamp
   * extractor when it has one, else the record timestamp). Undefined: no time.
   */
  recordTime(record: SinkRecord): number | undefined;
  /**
   * With behavior.on.null.values=write: the folder null-valued records go to
   * (tombstone.encoded.partition), which holds keys and headers files only.
   */
  readonly tombstonePartition?: string;
}

/** A record this partitioner cannot place (Confluent's PartitionException): an errant record. */
export class PartitionerError extends Error {
  readonly kind = 'partitioner';
}

const CONFLUENT = 'io.confluent.connect.storage.partitioner.';

export type PartitionerKind = 'default' | 'field' | 'time' | 'daily' | 'hourly';

const NAMES: Record<string, PartitionerKind> = {
  Default: 'default',
  DefaultPartitioner: 'default',
  Field: 'field',
  FieldPartitioner: 'field',
  TimeBased: 'time',
  TimeBasedPartitioner: 'time',
  Daily: 'daily',
  DailyPartitioner: 'daily',
  Hourly: 'hourly',
  HourlyPartitioner: 'hourly',
};

export const PARTITIONER_CLASS_NAMES: readonly string[] = Object.keys(NAMES).flatMap((n) =>
  n.endsWith('Partitioner') ? [n, `${CONFLUENT}${n}`] : [n],
);

export function partitionerKind(className: string): PartitionerKind {
  const simple = className.startsWith(CONFLUENT) ? className.slice(CONFLUENT.length) : className;
  const kind = NAMES[simple];
  if (!kind) {
    throw new PartitionerError(
      `unknown partitioner.class '${className}'; use Default, Field, TimeBased, Daily or Hourly (or Confluent's class names)`,
    );
  }
  return kind;
}

export interface PartitionerSettings extends Omit<TimeBasedSettings, 'pathFormat' | 'durationMs'> {
  className: string;
  fieldNames: readonly string[];
  /** directory.delim: between the Field and Daily/Hourly partitioners' levels ('/' when absent). */
  dirDelim?: string;
  pathFormat: string;
  durationMs: number;
  /** tombstone.encoded.partition, set with behavior.on.null.values=write only. */
  tombstonePartition?: string;
}

export function createPartitioner(s: PartitionerSettings, clock: Clock): Partitioner {
  const inner = partitionerOf(s, clock);
  return s.tombstonePartition === undefined
    ? inner
    : new TombstonePartitioner(inner, s.tombstonePartition);
}

function partitionerOf(s: PartitionerSettings, clock: Clock): Partitioner {
  const delim = s.dirDelim ?? '/';
  switch (partitionerKind(s.className)) {
    case 'default':
      return new DefaultPartitioner();
    case 'field':
      return new FieldPartitioner(s.fieldNames, delim);
    case 'daily':
      // Confluent's DailyPartitioner joins its levels with directory.delim.
      return new TimeBasedPartitioner(
        {
          ...s,
          pathFormat: ["'year'=YYYY", "'month'=MM", "'day'=dd"].join(delim),
          durationMs: 86_400_000,
        },
        clock,
      );
    case 'hourly':
      return new TimeBasedPartitioner(
        {
          ...s,
          pathFormat: ["'year'=YYYY", "'month'=MM", "'day'=dd", "'hour'=HH"].join(delim),
          durationMs: 3_600_000,
        },
        clock,
      );
    case 'time':
      if (s.durationMs <= 0) {
        throw new PartitionerError('TimeBasedPartitioner needs partition.duration.ms > 0');
      }
      return new TimeBasedPartitioner(
        { ...s, pathFormat: timeBasedPathFormat(s.pathFormat, delim) },
        clock,
      );
  }
}

/**
 * path.format as Confluent's TimeBasedPartitioner takes it: blank, or just the
 * delimiter, is refused; one trailing directory.delim is dropped (Confluent removes
 * the delimiter users add at the end). (partition.duration.ms must be positive:
 * Confluent refuses a negative one and divides by zero on 0.)
 */
export function timeBasedPathFormat(pathFormat: string, delim: string): string {
  if (pathFormat.trim() === '' || pathFormat === delim) {
    throw new PartitionerError('TimeBasedPartitioner needs path.format');
  }
  return pathFormat.endsWith(delim) ? pathFormat.slice(0, -delim.length) : pathFormat;
}

/**
 * Confluent's TombstoneSupportedPartitioner (S3 sink, behavior.on.null.values=write):
 * a null-valued record goes to the tombstone folder without asking the partitioner,
 * and its time is the record timestamp (Confluent's TombstoneTimestampExtractor).
 */
export class TombstonePartitioner implements Partitioner {
  constructor(
    private readonly inner: Partitioner,
    readonly tombstonePartition: string,
  ) {}

  encodePartition(record: SinkRecord): string {
    return isTombstone(record) ? this.tombstonePartition : this.inner.encodePartition(record);
  }
  recordTime(record: SinkRecord): number | undefined {
    return isTombstone(record) ? (record.timestamp ?? undefined) : this.inner.recordTime(record);
  }
}

/** Confluent's default tombstone.encoded.partition. */
export const DEFAULT_TOMBSTONE_PARTITION = 'tombstone';

/** The folder null values go to under `nullBehavior`, or undefined when none are written. */
export function tombstoneFolder(
  nullBehavior: string,
  partitioner: { tombstonePartition?: string },
): string | undefined {
  return nullBehavior === 'write'
    ? (partitioner.tombstonePartition ?? DEFAULT_TOMBSTONE_PARTITION)
    : undefined;
}

export function isTombstone(record: SinkRecord): boolean {
  return record.value === null || record.value === undefined;
}

export class DefaultPartitioner implements Partitioner {
  /** `partition=N` by N: called per record, so made once per partition. */
  private readonly names: string[] = [];

  encodePartition(record: SinkRecord): string {
    const p = record.kafkaPartition;
    let name = this.names[p];
    if (name === undefined) {
      name = `partition=${p}`;
      this.names[p] = name;
    }
    return name;
  }
  recordTime(record: SinkRecord): number | undefined {
    return record.timestamp ?? undefined;
  }
}
