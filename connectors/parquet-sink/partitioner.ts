/**
 * Partitioners: which folder (the "encoded partition") a record's file goes to.
 *
 *   Default    partition=<kafka partition>
 *   Field      <f1>=<v1>/<f2>=<v2> from `partition.field.name` (struct fields or
 *              schemaless object keys; dotted names reach into nested structs)
 *   TimeBased  `path.format` applied to the record's time floored to
 *              `partition.duration.ms` in `timezone` (see time-based-partitioner.ts)
 *   Daily      TimeBased with 'year'=YYYY/'month'=MM/'day'=dd and one day
 *   Hourly     TimeBased with 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH and one hour
 * Confluent's class names (io.confluent.connect.storage.partitioner.*) are aliases,
 * so existing connector configs run unchanged.
 *
 * Partition values are escaped as Hive does (%XX for '/', '=', '%', ... ) so a value
 * can never add a folder level; a null field value becomes Hive's
 * __HIVE_DEFAULT_PARTITION__, which Hive, Spark and DuckDB read back as NULL.
 */
import type { Clock, SinkRecord } from '../../src/connect/api/index.ts';
import { TimeBasedPartitioner, type TimeBasedSettings } from './time-based-partitioner.ts';

export interface Partitioner {
  encodePartition(record: SinkRecord): string;
  /**
   * The time rotate.interval.ms compares (Confluent: the partitioner's timestamp
   * extractor when it has one, else the record timestamp). Undefined: no time.
   */
  recordTime(record: SinkRecord): number | undefined;
}

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
  /** directory.delim: between the Field partitioner's levels ('/' when absent). */
  dirDelim?: string;
  pathFormat: string;
  durationMs: number;
}

export function createPartitioner(s: PartitionerSettings, clock: Clock): Partitioner {
  switch (partitionerKind(s.className)) {
    case 'default':
      return new DefaultPartitioner();
    case 'field':
      return new FieldPartitioner(s.fieldNames, s.dirDelim);
    case 'daily':
      return new TimeBasedPartitioner(
        { ...s, pathFormat: "'year'=YYYY/'month'=MM/'day'=dd", durationMs: 86_400_000 },
        clock,
      );
    case 'hourly':
      return new TimeBasedPartitioner(
        { ...s, pathFormat: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", durationMs: 3_600_000 },
        clock,
      );
    case 'time':
      if (s.pathFormat === '') throw new PartitionerError('TimeBasedPartitioner needs path.format');
      if (s.durationMs <= 0) {
        throw new PartitionerError('TimeBasedPartitioner needs partition.duration.ms > 0');
      }
      return new TimeBasedPartitioner(s, clock);
  }
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

export class FieldPartitioner implements Partitioner {
  constructor(
    private readonly fieldNames: readonly string[],
    private readonly dirDelim = '/',
  ) {
    if (fieldNames.length === 0) {
      throw new PartitionerError('FieldPartitioner needs partition.field.name');
    }
  }
  encodePartition(record: SinkRecord): string {
    return this.fieldNames
      .map((name) => `${name}=${hiveEscape(fieldValue(record, name))}`)
      .join(this.dirDelim);
  }
  recordTime(record: SinkRecord): number | undefined {
    return record.timestamp ?? undefined;
  }
}

/** A (possibly dotted) field of the record value, as partition text; null for absent. */
export function fieldValue(record: SinkRecord, path: string): string | null {
  let v: unknown = record.value;
  if (v === null || v === undefined || typeof v !== 'object') {
    throw new PartitionerError(
      `cannot partition ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset} by '${path}': the value is not a struct`,
    );
  }
  for (const part of path.split('.')) {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'object') {
      throw new PartitionerError(`field '${path}' does not name a struct field`);
    }
    v = (v as Record<string, unknown>)[part];
  }
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') {
    throw new PartitionerError(
      `field '${path}' of ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset} is not a primitive`,
    );
  }
  return String(v);
}

/** Hive's partition-value escaping (FileUtils.escapePathName), plus Hive's null name. */
export function hiveEscape(value: string | null): string {
  if (value === null) return '__HIVE_DEFAULT_PARTITION__';
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    out +=
      code < 0x20 || code === 0x7f || '"#%\'*/:=?\\{[]^'.includes(ch)
        ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
        : ch;
  }
  return out;
}
