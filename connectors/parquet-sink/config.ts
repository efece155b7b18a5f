/**
 * The Parquet sink's configuration: Confluent S3 sink keys, so configs written for
 * io.confluent.connect.s3.S3SinkConnector run unchanged, plus a local-folder store.
 *
 * Store selection: `store.url=file:///path` writes to a folder; otherwise the store is
 * the S3 bucket `s3.bucket.name`, and a non-file `store.url` is the S3 endpoint
 * override (as in Confluent's connector: MinIO, s3rver, other S3-compatible stores).
 */
import {
  type AnyConfigDef,
  atLeast,
  type ConfigError,
  define,
  oneOf,
} from '../../src/connect/api/index.ts';
import type { ParquetCodec } from './codecs.ts';
import type { DebeziumTypesMode, SemanticTypes } from './debezium-types.ts';
import { PARTITIONER_CLASS_NAMES, partitionerKind } from './partitioner.ts';
import { COMPATIBILITIES, type Compatibility } from './schema-evolution.ts';
import { extractorKind } from './time-based-partitioner.ts';
import type { NullBehavior } from './topic-partition-writer.ts';

const MiB = 1024 * 1024;
/** S3 refuses multipart parts under 5 MiB (except the last). */
const S3_MIN_PART_SIZE = 5 * MiB;

const GROUP_STORE = 'Storage';
const GROUP_FILES = 'Files';
const GROUP_PARTITIONER = 'Partitioner';

export const parquetSinkConfigDefs: readonly AnyConfigDef[] = [
  define({
    name: 'store.url',
    type: 'string',
    default: '',
    doc: 'file:///path for a local folder; otherwise the S3 endpoint override (MinIO, s3rver), empty for AWS',
    importance: 'high',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.bucket.name',
    type: 'string',
    default: '',
    doc: 'S3 bucket to write to',
    importance: 'high',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.region',
    type: 'string',
    default: 'us-west-2',
    doc: 'AWS region of the bucket',
    importance: 'medium',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.path.style.access.enabled',
    type: 'boolean',
    default: true,
    doc: 'Address the bucket in the path (needed by MinIO and s3rver) rather than the host name',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.part.size',
    type: 'int',
    default: 25 * MiB,
    validator: atLeast(S3_MIN_PART_SIZE),
    doc: 'Files up to this size go in one PUT; larger ones in multipart uploads of parts this size',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.part.retries',
    type: 'int',
    default: 3,
    validator: atLeast(0),
    doc: 'Retries of a failed S3 request (network errors, throttling, 5xx)',
    group: GROUP_STORE,
  }),
  define({
    name: 's3.retry.backoff.ms',
    type: 'long',
    default: 200,
    validator: atLeast(0),
    doc: 'First back-off between S3 retries; doubles each retry',
    group: GROUP_STORE,
  }),
  define({
    name: 'aws.access.key.id',
    type: 'string',
    default: '',
    doc: 'Access key; empty uses the AWS default credential chain',
    group: GROUP_STORE,
  }),
  define({
    name: 'aws.secret.access.key',
    type: 'password',
    default: '',
    doc: 'Secret key matching aws.access.key.id',
    group: GROUP_STORE,
  }),
  define({
    name: 'topics.dir',
    type: 'string',
    default: 'topics',
    doc: 'Top folder of the files in the store',
    group: GROUP_FILES,
  }),
  define({
    name: 'flush.size',
    type: 'int',
    default: undefined,
    validator: atLeast(1),
    doc: 'Records per topic partition before its files are written',
    importance: 'high',
    group: GROUP_FILES,
  }),
  define({
    name: 'rotate.interval.ms',
    type: 'long',
    default: -1,
    doc: 'Write files once record time spans this long (-1: off); deterministic',
    group: GROUP_FILES,
  }),
  define({
    name: 'rotate.schedule.interval.ms',
    type: 'long',
    default: -1,
    doc: 'Write open files at wall-clock multiples of this interval (-1: off); idle partitions too, on the empty put the runtime makes when no records come',
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.codec',
    type: 'string',
    default: 'snappy',
    validator: oneOf('snappy', 'gzip', 'zstd', 'none'),
    doc: 'Parquet compression codec',
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.debezium.logical.types',
    type: 'string',
    default: 'native',
    validator: oneOf('native', 'as-is'),
    doc: "Debezium's semantic types as native Parquet logical types (ZonedTimestamp as TIMESTAMP in UTC, ZonedTime as TIME in UTC, Uuid as UUID, Json as JSON, VariableScaleDecimal per parquet.variable.scale.decimal.mode), or as-is: their physical string or struct, as Confluent's sink writes them",
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.variable.scale.decimal.mode',
    type: 'string',
    default: 'decimal',
    validator: oneOf('decimal', 'double'),
    doc: 'With native logical types, how a VariableScaleDecimal (Postgres numeric without a scale) is written: DECIMAL(38, parquet.variable.scale.decimal.scale), failing a value that would need rounding, or DOUBLE',
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.variable.scale.decimal.scale',
    type: 'int',
    default: 10,
    validator: atLeast(0),
    doc: 'The scale of DECIMAL(38, s) columns written for VariableScaleDecimal values (at most 38)',
    group: GROUP_FILES,
  }),
  define({
    name: 'behavior.on.null.values',
    type: 'string',
    default: 'fail',
    validator: oneOf('fail', 'ignore', 'write'),
    doc: 'What a record with a null value (tombstone) does: fail the task (even with errors.tolerance=all: it never goes to the dead letter queue), skip it, or write a row of nulls',
    group: GROUP_FILES,
  }),
  define({
    name: 'schema.compatibility',
    type: 'string',
    default: 'NONE',
    validator: oneOf(...COMPATIBILITIES),
    doc: 'Which schema changes may share a file; others start a new one',
    group: GROUP_FILES,
  }),
  define({
    name: 'filename.offset.zero.pad.width',
    type: 'int',
    default: 10,
    validator: atLeast(0),
    doc: 'Digits of the start offset in file names, zero-padded',
    group: GROUP_FILES,
  }),
  define({
    name: 'store.kafka.keys',
    type: 'boolean',
    default: false,
    doc: 'Write record keys in a __kafka_key column',
    group: GROUP_FILES,
  }),
  define({
    name: 'store.kafka.headers',
    type: 'boolean',
    default: false,
    doc: 'Write record headers in a __kafka_headers column',
    group: GROUP_FILES,
  }),
  define({
    name: 'buffer.memory.max.bytes',
    type: 'long',
    default: 256 * MiB,
    validator: atLeast(MiB),
    doc: 'Cap on buffered data per task; above it the largest partitions write their files early',
    group: GROUP_FILES,
  }),
  define({
    name: 'format.class',
    type: 'class',
    default: 'io.confluent.connect.s3.format.parquet.ParquetFormat',
    validator: oneOf('io.confluent.connect.s3.format.parquet.ParquetFormat', 'ParquetFormat'),
    doc: 'Accepted for Confluent configs; only Parquet is written',
    group: GROUP_FILES,
  }),
  define({
    name: 'storage.class',
    type: 'class',
    default: 'io.confluent.connect.s3.storage.S3Storage',
    doc: 'Accepted for Confluent configs; the store follows store.url',
    group: GROUP_STORE,
  }),
  define({
    name: 'partitioner.class',
    type: 'class',
    default: 'Default',
    validator: oneOf(...PARTITIONER_CLASS_NAMES),
    doc: 'Default, Field, TimeBased, Daily, Hourly (or Confluent class names)',
    importance: 'high',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'partition.field.name',
    type: 'list',
    default: [],
    doc: 'Fields the Field partitioner names folders by',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'path.format',
    type: 'string',
    default: '',
    doc: "Folder pattern of the TimeBased partitioner, e.g. 'year'=YYYY/'month'=MM/'day'=dd",
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'partition.duration.ms',
    type: 'long',
    default: -1,
    doc: 'Time span of one TimeBased folder',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'locale',
    type: 'string',
    default: 'en',
    doc: 'Locale for month and day names in path.format',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'timezone',
    type: 'string',
    default: 'UTC',
    doc: 'Time zone of path.format folders',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'timestamp.extractor',
    type: 'string',
    default: 'Wallclock',
    doc: 'Record, RecordField or Wallclock: the time TimeBased partitioners use',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'timestamp.field',
    type: 'string',
    default: 'timestamp',
    doc: 'Value field holding the time for timestamp.extractor=RecordField',
    group: GROUP_PARTITIONER,
  }),
];

export interface ParquetSinkConfig {
  store:
    | { kind: 'local'; url: string }
    | {
        kind: 's3';
        bucket: string;
        region: string;
        endpoint: string;
        pathStyle: boolean;
        partSize: number;
        retries: number;
        backoffMs: number;
        credentials?: { accessKeyId: string; secretAccessKey: string };
      };
  topicsDir: string;
  flushSize: number;
  rotateIntervalMs: number;
  rotateScheduleIntervalMs: number;
  codec: ParquetCodec;
  nullBehavior: NullBehavior;
  types: SemanticTypes;
  compatibility: Compatibility;
  padWidth: number;
  storeKeys: boolean;
  storeHeaders: boolean;
  memoryMaxBytes: number;
  partitioner: {
    className: string;
    fieldNames: string[];
    pathFormat: string;
    durationMs: number;
    locale: string;
    timezone: string;
    timestampExtractor: string;
    timestampField: string;
  };
}

/** Typed settings from values parsed against parquetSinkConfigDefs. */
export function toSinkConfig(v: Readonly<Record<string, unknown>>): ParquetSinkConfig {
  const url = v['store.url'] as string;
  const accessKeyId = v['aws.access.key.id'] as string;
  const store: ParquetSinkConfig['store'] = url.startsWith('file:')
    ? { kind: 'local', url }
    : {
        kind: 's3',
        bucket: v['s3.bucket.name'] as string,
        region: v['s3.region'] as string,
        endpoint: url,
        pathStyle: v['s3.path.style.access.enabled'] as boolean,
        partSize: v['s3.part.size'] as number,
        retries: v['s3.part.retries'] as number,
        backoffMs: v['s3.retry.backoff.ms'] as number,
        ...(accessKeyId
          ? { credentials: { accessKeyId, secretAccessKey: v['aws.secret.access.key'] as string } }
          : {}),
      };
  return {
    store,
    topicsDir: v['topics.dir'] as string,
    flushSize: v['flush.size'] as number,
    rotateIntervalMs: v['rotate.interval.ms'] as number,
    rotateScheduleIntervalMs: v['rotate.schedule.interval.ms'] as number,
    codec: v['parquet.codec'] as ParquetCodec,
    nullBehavior: v['behavior.on.null.values'] as NullBehavior,
    types: {
      debeziumTypes: v['parquet.debezium.logical.types'] as DebeziumTypesMode,
      variableScaleDecimal:
        v['parquet.variable.scale.decimal.mode'] === 'double'
          ? { mode: 'double' }
          : { mode: 'decimal', scale: v['parquet.variable.scale.decimal.scale'] as number },
    },
    compatibility: v['schema.compatibility'] as Compatibility,
    padWidth: v['filename.offset.zero.pad.width'] as number,
    storeKeys: v['store.kafka.keys'] as boolean,
    storeHeaders: v['store.kafka.headers'] as boolean,
    memoryMaxBytes: v['buffer.memory.max.bytes'] as number,
    partitioner: {
      className: v['partitioner.class'] as string,
      fieldNames: v['partition.field.name'] as string[],
      pathFormat: v['path.format'] as string,
      durationMs: v['partition.duration.ms'] as number,
      locale: v.locale as string,
      timezone: v.timezone as string,
      timestampExtractor: v['timestamp.extractor'] as string,
      timestampField: v['timestamp.field'] as string,
    },
  };
}

/** Cross-field checks, one error per offending key (the connector's validate()). */
export function validateSinkConfig(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  const url = v['store.url'] as string;
  if (!url.startsWith('file:') && !(v['s3.bucket.name'] as string)) {
    errors.push({
      key: 's3.bucket.name',
      value: '',
      message: 'set s3.bucket.name, or store.url=file:///path for a local folder',
    });
  }
  if (url !== '' && !url.startsWith('file:') && !/^https?:\/\//.test(url)) {
    errors.push({
      key: 'store.url',
      value: url,
      message: 'expected file:///path or an http(s):// S3 endpoint',
    });
  }
  const scale = v['parquet.variable.scale.decimal.scale'] as number;
  if (scale > 38) {
    errors.push({
      key: 'parquet.variable.scale.decimal.scale',
      value: scale,
      message: 'must be at most 38, the precision of the DECIMAL columns it scales',
    });
  }
  const kind = partitionerKind(v['partitioner.class'] as string);
  if (kind === 'field' && (v['partition.field.name'] as string[]).length === 0) {
    errors.push({
      key: 'partition.field.name',
      value: [],
      message: 'the Field partitioner needs at least one field',
    });
  }
  if (kind === 'time') {
    if (!(v['path.format'] as string)) {
      errors.push({
        key: 'path.format',
        value: '',
        message: 'the TimeBased partitioner needs path.format',
      });
    }
    if ((v['partition.duration.ms'] as number) <= 0) {
      errors.push({
        key: 'partition.duration.ms',
        value: v['partition.duration.ms'],
        message: 'the TimeBased partitioner needs a positive duration',
      });
    }
  }
  if (kind === 'time' || kind === 'daily' || kind === 'hourly') {
    try {
      extractorKind(v['timestamp.extractor'] as string);
    } catch (e) {
      errors.push({
        key: 'timestamp.extractor',
        value: v['timestamp.extractor'],
        message: (e as Error).message,
      });
    }
  }
  return errors;
}
