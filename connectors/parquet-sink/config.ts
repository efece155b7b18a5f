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
  between,
  type ConfigError,
  define,
  nonEmpty,
  type Validator,
} from '../../src/connect/api/index.ts';
import { DEFAULT_ZSTD_LEVEL, type ParquetCodec, ZSTD_LEVELS } from './codecs.ts';
import type { DebeziumTypesMode, SemanticTypes } from './debezium-types.ts';
import { canonical, enumOf } from './enum-values.ts';
import {
  type AvroCodec,
  type FileCompression,
  FORMAT_CLASSES,
  type FormatKind,
  type FormatSettings,
  formatKind,
  type JsonDecimalFormat,
} from './file-format.ts';
import {
  DEFAULT_TOMBSTONE_PARTITION,
  PARTITIONER_CLASS_NAMES,
  partitionerKind,
  timeBasedPathFormat,
} from './partitioner.ts';
import { PathFormatter } from './path-format.ts';
import { fieldNameProblem } from './record-field-path.ts';
import { type S3Features, s3ConfigDefs, toS3Features, validateS3Config } from './s3-config.ts';
import { COMPATIBILITIES, type Compatibility } from './schema-evolution.ts';
import { extractorKind } from './time-based-partitioner.ts';
import type { NullBehavior } from './topic-partition-writer.ts';
import { unsupportedKeyErrors } from './unsupported-keys.ts';

const MiB = 1024 * 1024;
/** parquet-mr's name (ZstandardCodec), so a level set for parquet-mr writers reads the same. */
const ZSTD_LEVEL_KEY = 'parquet.compression.codec.zstd.level';

const GROUP_STORE = 'Storage';
const GROUP_FILES = 'Files';
const GROUP_PARTITIONER = 'Partitioner';

const NULL_BEHAVIORS: readonly NullBehavior[] = ['fail', 'ignore', 'write'];
const PARQUET_CODECS: readonly ParquetCodec[] = [
  'snappy',
  'gzip',
  'zstd',
  'brotli',
  'lz4_raw',
  'none',
];
/** Codecs Confluent's ParquetFormat takes that this writer does not, and why (codecs.ts). */
const REFUSED_CODECS: Record<string, string> = {
  lz4: "Parquet's LZ4 codec is deprecated (writers framed it in incompatible ways); use lz4_raw, the LZ4 codec current readers take",
  lzo: 'this sink has no LZO compressor; use lz4_raw or snappy for fast compression, zstd for small files',
};

const parquetCodec: Validator<string> = (v, key) => {
  const why = REFUSED_CODECS[v.toLowerCase()];
  if (why !== undefined) return `not supported: ${key}=${v}: ${why}`;
  return enumOf(...PARQUET_CODECS)(v, key);
};

const CONFLUENT_AVRO_FORMAT = FORMAT_CLASSES.avro[0];
/** The formats format.class takes (file-format.ts). */
const WRITTEN_FORMATS: readonly FormatKind[] = ['parquet', 'json', 'bytearray', 'avro'];
const formatClass: Validator<string> = (v, key) => {
  const kind = formatKind(v);
  if (kind !== undefined && WRITTEN_FORMATS.includes(kind)) return undefined;
  const names = WRITTEN_FORMATS.map((k) => FORMAT_CLASSES[k][0]).join(', ');
  return `not supported: ${key}=${v}; this sink writes ${names} (or their short names)`;
};
/**
 * keys.format.class / headers.format.class: Confluent's formats for keys and headers
 * files (record-views.ts). ByteArrayFormat and the others are refused by name.
 */
const VIEW_FORMATS: readonly FormatKind[] = ['parquet', 'avro', 'json'];
const viewFormatClass: Validator<string> = (v, key) => {
  const kind = formatKind(v);
  if (kind !== undefined && VIEW_FORMATS.includes(kind)) return undefined;
  const names = VIEW_FORMATS.map((k) => FORMAT_CLASSES[k][0]).join(', ');
  return `not supported: ${key}=${v}; keys and headers files are written as ${names} (or their short names)`;
};

const AVRO_CODECS: readonly AvroCodec[] = ['null', 'deflate', 'snappy'];
const avroCodec: Validator<string> = (v, key) =>
  ['bzip2', 'xz'].includes(v.toLowerCase())
    ? `not supported: ${key}=${v}: this sink has no ${v.toLowerCase()} compressor; use deflate (smallest) or snappy (fastest)`
    : enumOf(...AVRO_CODECS)(v, key);

/** Keys of one format only, with their defaults: another value with another format is refused. */
const FORMAT_KEYS: ReadonlyArray<{ key: string; kinds: readonly FormatKind[]; default: unknown }> =
  [
    { key: 'parquet.codec', kinds: ['parquet'], default: 'snappy' },
    { key: 'json.decimal.format', kinds: ['json'], default: 'BASE64' },
    { key: 'format.bytearray.extension', kinds: ['bytearray'], default: '.bin' },
    { key: 'format.bytearray.separator', kinds: ['bytearray'], default: null },
    { key: 'avro.codec', kinds: ['avro'], default: 'null' },
    { key: 's3.compression.level', kinds: ['json', 'bytearray'], default: -1 },
  ];

/**
 * keys.format.class / headers.format.class (their values are checked by viewFormatClass):
 * the tombstone folder's keys file is its commit point, which recovery finds by the
 * value files' extension and reads as it reads them, so with
 * behavior.on.null.values=write the keys file must be of format.class's kind.
 */
function viewFormatErrors(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const keysClass = v['keys.format.class'] as string;
  if (
    v['store.kafka.keys'] !== true ||
    String(v['behavior.on.null.values']).toLowerCase() !== 'write'
  ) {
    return [];
  }
  const valueClass = v['format.class'] as string;
  if (formatKind(keysClass) === (formatKind(valueClass) ?? 'parquet')) return [];
  return [
    {
      key: 'keys.format.class',
      value: keysClass,
      message: `not supported: keys.format.class=${keysClass} with behavior.on.null.values=write and format.class=${valueClass}; the tombstone folder's keys files are the commit point recovery reads as value files, so set keys.format.class to format.class's format`,
    },
  ];
}

const partitionerClass: Validator<string> = (v, key) =>
  PARTITIONER_CLASS_NAMES.includes(v)
    ? undefined
    : `not supported: ${key}=${v}; custom partitioner classes are not loaded: use Default, Field, TimeBased, Daily or Hourly (or Confluent's io.confluent.connect.storage.partitioner.* names of them)`;

const S3_STORAGE = ['io.confluent.connect.s3.storage.S3Storage', 'S3Storage'];
const storageClass: Validator<string> = (v, key) =>
  S3_STORAGE.includes(v)
    ? undefined
    : `not supported: ${key}=${v}; the store is S3 (${S3_STORAGE[0]}) or, with store.url=file:///path, a local folder`;

export const parquetSinkConfigDefs: readonly AnyConfigDef[] = [
  define({
    name: 'store.url',
    type: 'string',
    default: '',
    doc: 'file:///path for a local folder; otherwise the S3 endpoint override (MinIO, s3rver), empty for AWS',
    importance: 'high',
    group: GROUP_STORE,
  }),
  ...s3ConfigDefs,
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
    doc: 'Write open files at multiples of this interval from local midnight in timezone, the last one of each day cut at the next midnight, as Confluent schedules them (-1: off); idle partitions too, on the empty put the runtime makes when no records come',
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.codec',
    type: 'string',
    default: 'snappy',
    validator: parquetCodec,
    doc: "Parquet compression codec: snappy, gzip, zstd, brotli, lz4_raw or none (Confluent's lz4 and lzo are refused); it names the files' extension (.snappy.parquet, .gz.parquet, .zstd.parquet, .br.parquet, .lz4raw.parquet, .parquet)",
    group: GROUP_FILES,
  }),
  define({
    name: ZSTD_LEVEL_KEY,
    type: 'int',
    default: null,
    defaultDoc: String(DEFAULT_ZSTD_LEVEL),
    validator: between(ZSTD_LEVELS.min, ZSTD_LEVELS.max),
    doc: `zstd level of parquet.codec=zstd, ${ZSTD_LEVELS.min} to ${ZSTD_LEVELS.max} (parquet-mr's key; Confluent's sink has none and writes ${DEFAULT_ZSTD_LEVEL}); refused with another codec`,
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.debezium.logical.types',
    type: 'string',
    default: 'native',
    validator: enumOf('native', 'as-is'),
    doc: "Debezium's semantic types as native Parquet logical types (ZonedTimestamp as TIMESTAMP in UTC, ZonedTime as TIME in UTC, Uuid as UUID, Json as JSON, VariableScaleDecimal per parquet.variable.scale.decimal.mode), or as-is: their physical string or struct, as Confluent's sink writes them",
    group: GROUP_FILES,
  }),
  define({
    name: 'parquet.variable.scale.decimal.mode',
    type: 'string',
    default: 'decimal',
    validator: enumOf('decimal', 'double'),
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
    validator: enumOf(...NULL_BEHAVIORS),
    doc: 'What a record with a null value (tombstone) does: fail the task (even with errors.tolerance=all: it never goes to the dead letter queue), skip it (see report.null.values.to.dlq), or write it as Confluent does: its key (and headers) in the keys (and headers) file of the folder tombstone.encoded.partition names, with no value file there; needs store.kafka.keys=true',
    group: GROUP_FILES,
  }),
  define({
    name: 'tombstone.encoded.partition',
    type: 'string',
    default: DEFAULT_TOMBSTONE_PARTITION,
    validator: nonEmpty,
    doc: "With behavior.on.null.values=write, the folder (in place of the partitioner's) that null-valued records go to: <topics.dir>/<topic>/<this>/ holds their keys and headers files only",
    group: GROUP_FILES,
  }),
  define({
    name: 'report.null.values.to.dlq',
    type: 'boolean',
    default: true,
    doc: 'With behavior.on.null.values=ignore and errors.tolerance=all, also send each skipped null-valued record to the dead letter queue',
    group: GROUP_FILES,
  }),
  define({
    name: 'rotate.file.on.partition.change',
    type: 'boolean',
    default: true,
    doc: 'With rotate.interval.ms and a time-based partitioner, write the open files when a record goes to another folder than the one before it (as Confluent does)',
    group: GROUP_FILES,
  }),
  define({
    name: 'retry.backoff.ms',
    type: 'long',
    default: 5000,
    validator: atLeast(0),
    doc: 'After a transient store failure, how long the runner waits before handing the batch again',
    group: GROUP_FILES,
  }),
  define({
    name: 'enable.conditional.writes',
    type: 'boolean',
    default: true,
    doc: "Accepted for Confluent configs: conditional writes keep Confluent's replays from replacing a file with other content; here a replay rewrites the same object with the same bytes (recovery.ts), so either value gives that",
    group: GROUP_FILES,
  }),
  define({
    name: 'schemas.cache.config',
    type: 'int',
    default: 1000,
    validator: atLeast(1),
    doc: "Accepted for Confluent configs: sizes AvroData's schema cache, which this sink does not use",
    group: GROUP_FILES,
  }),
  define({
    name: 's3.compression.type',
    type: 'string',
    default: 'none',
    validator: enumOf('none', 'gzip'),
    doc: 'Compression of whole files for JsonFormat and ByteArrayFormat: gzip adds .gz to the extension (.json.gz); Parquet and Avro files compress inside (parquet.codec, avro.codec), so only none goes with them',
    group: GROUP_FILES,
  }),
  define({
    name: 'json.decimal.format',
    type: 'string',
    default: 'BASE64',
    validator: enumOf('BASE64', 'NUMERIC'),
    doc: "JsonFormat: Decimal values as base64 of their unscaled bytes (BASE64, JsonConverter's default) or as JSON numbers (NUMERIC)",
    group: GROUP_FILES,
  }),
  define({
    name: 'avro.codec',
    type: 'string',
    default: 'null',
    validator: avroCodec,
    doc: "AvroFormat: the container files' block codec, null, deflate or snappy (Confluent's bzip2 and xz are refused)",
    group: GROUP_FILES,
  }),
  define({
    name: 'format.bytearray.extension',
    type: 'string',
    default: '.bin',
    doc: 'ByteArrayFormat: the extension of its files (.bin.gz with s3.compression.type=gzip)',
    group: GROUP_FILES,
  }),
  define({
    name: 'format.bytearray.separator',
    type: 'string',
    default: null,
    defaultDoc: 'a line feed (\\n)',
    doc: 'ByteArrayFormat: written after each record value, taken as given (white space included, empty for none); a value that contains it reads back as several records',
    group: GROUP_FILES,
  }),
  define({
    name: 's3.compression.level',
    type: 'int',
    default: -1,
    validator: between(-1, 9),
    doc: 'Level of s3.compression.type=gzip: -1 (zlib default) or 0 to 9',
    group: GROUP_FILES,
  }),
  define({
    name: 'schema.compatibility',
    type: 'string',
    default: 'NONE',
    validator: enumOf(...COMPATIBILITIES),
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
    name: 'file.delim',
    type: 'string',
    default: '+',
    validator: nonEmpty,
    doc: 'Separator of topic, Kafka partition and start offset in file names',
    group: GROUP_FILES,
  }),
  define({
    name: 'directory.delim',
    type: 'string',
    default: '/',
    validator: nonEmpty,
    doc: "Separator of the folder levels: topics.dir, topic, and the partitioner's levels",
    group: GROUP_FILES,
  }),
  define({
    name: 'store.kafka.keys',
    type: 'boolean',
    default: false,
    doc: "Write record keys in a keys file beside each value file (<name>.keys<ext>, in keys.format.class), as Confluent's sink does; a record with a null key fails",
    group: GROUP_FILES,
  }),
  define({
    name: 'store.kafka.headers',
    type: 'boolean',
    default: false,
    doc: "Write record headers in a headers file beside each value file (<name>.headers<ext>, in headers.format.class: a list of {key, value} strings a record), as Confluent's sink does; a record without headers fails",
    group: GROUP_FILES,
  }),
  define({
    name: 'keys.format.class',
    type: 'string',
    default: CONFLUENT_AVRO_FORMAT,
    validator: viewFormatClass,
    doc: "Format of the keys files with store.kafka.keys=true, as Confluent writes them: AvroFormat (<name>.keys.avro, the key under its own schema), JsonFormat (<name>.keys.json, one key a line) or ParquetFormat (<name>.keys<parquet ext>, one column `key`); other formats are refused. Files of another format than format.class take that format's defaults (avro.codec null; JSON uncompressed, decimals BASE64; parquet.codec). With behavior.on.null.values=write it must be format.class's format",
    group: GROUP_FILES,
  }),
  define({
    name: 'headers.format.class',
    type: 'string',
    default: CONFLUENT_AVRO_FORMAT,
    validator: viewFormatClass,
    doc: 'Format of the headers files with store.kafka.headers=true, as Confluent writes them: AvroFormat (<name>.headers.avro, an array of {key, value} strings a record), JsonFormat (<name>.headers.json, one such array a line) or ParquetFormat (one column `headers`); other formats are refused. Files of another format than format.class take the defaults of that format, as keys files do',
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
    validator: formatClass,
    doc: "Confluent's ParquetFormat, JsonFormat (one JSON value a line, as JsonConverter writes it with schemas.enable=false), ByteArrayFormat (raw bytes values) or AvroFormat (Avro container files, the schema converted as AvroData does), or their short names; other formats (CsvFormat, OrcFormat, ...) are refused by name",
    group: GROUP_FILES,
  }),
  define({
    name: 'storage.class',
    type: 'class',
    default: 'io.confluent.connect.s3.storage.S3Storage',
    validator: storageClass,
    doc: "Confluent's S3Storage (the only storage class): the store is the S3 bucket, or the folder store.url=file:///path names",
    group: GROUP_STORE,
  }),
  define({
    name: 'partitioner.class',
    type: 'class',
    default: 'Default',
    validator: partitionerClass,
    doc: "Default, Field, TimeBased, Daily, Hourly, or Confluent's class names of them (io.confluent.connect.storage.partitioner.*), naming folders as Confluent's do; custom partitioner classes are refused",
    importance: 'high',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'partition.field.name',
    type: 'list',
    default: [],
    doc: "Fields the Field partitioner names folders by, as Confluent's FieldPartitioner does: <field>=<value> levels joined by directory.delim, values unescaped, <field>=null for null; dots reach into nested structs; INT8 to INT64, STRING and BOOLEAN fields only (others are errant records, a field missing from the schema fails the task)",
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
    doc: 'Time zone (IANA name) of path.format folders and of the rotate.schedule.interval.ms schedule',
    group: GROUP_PARTITIONER,
  }),
  define({
    name: 'timestamp.extractor',
    type: 'string',
    default: 'Wallclock',
    doc: "Record, RecordField or Wallclock (or Confluent's TimeBasedPartitioner$...TimestampExtractor class names): the time TimeBased partitioners use; custom extractor classes are refused",
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
        features?: S3Features;
      };
  topicsDir: string;
  /** file.delim and directory.delim. */
  fileDelim: string;
  dirDelim: string;
  /** retry.backoff.ms: the runner's pause after a transient store failure. */
  retryBackoffMs: number;
  reportNullsToDlq: boolean;
  rotateOnPartitionChange: boolean;
  flushSize: number;
  rotateIntervalMs: number;
  rotateScheduleIntervalMs: number;
  codec: ParquetCodec;
  /** parquet.compression.codec.zstd.level; DEFAULT_ZSTD_LEVEL when absent. */
  zstdLevel?: number;
  nullBehavior: NullBehavior;
  /** format.class and its settings. */
  format: FormatSettings;
  types: SemanticTypes;
  compatibility: Compatibility;
  padWidth: number;
  storeKeys: boolean;
  storeHeaders: boolean;
  /**
   * keys.format.class / headers.format.class and their settings (viewFormatSettings);
   * toSinkConfig always sets them, absent means Parquet.
   */
  keysFormat?: FormatSettings;
  headersFormat?: FormatSettings;
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
    /** tombstone.encoded.partition, with behavior.on.null.values=write only. */
    tombstonePartition?: string;
  };
}

/**
 * Typed settings from values parsed against parquetSinkConfigDefs. `raw`, the config
 * as given, supplies format.bytearray.separator untrimmed: white space is significant
 * there, as Confluent reads it from the originals for that reason.
 */
export function toSinkConfig(
  v: Readonly<Record<string, unknown>>,
  raw: Readonly<Record<string, unknown>> = v,
): ParquetSinkConfig {
  const url = v['store.url'] as string;
  const format = toFormatSettings(v, raw);
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
        features: toS3Features(v),
      };
  return {
    store,
    topicsDir: v['topics.dir'] as string,
    fileDelim: v['file.delim'] as string,
    dirDelim: v['directory.delim'] as string,
    retryBackoffMs: v['retry.backoff.ms'] as number,
    reportNullsToDlq: v['report.null.values.to.dlq'] as boolean,
    rotateOnPartitionChange: v['rotate.file.on.partition.change'] as boolean,
    flushSize: v['flush.size'] as number,
    rotateIntervalMs: v['rotate.interval.ms'] as number,
    rotateScheduleIntervalMs: v['rotate.schedule.interval.ms'] as number,
    codec: canonical(PARQUET_CODECS, v['parquet.codec'] as string),
    zstdLevel: (v[ZSTD_LEVEL_KEY] as number | null) ?? DEFAULT_ZSTD_LEVEL,
    nullBehavior: canonical(NULL_BEHAVIORS, v['behavior.on.null.values'] as string),
    format,
    types: {
      debeziumTypes: canonical<DebeziumTypesMode>(
        ['native', 'as-is'],
        v['parquet.debezium.logical.types'] as string,
      ),
      variableScaleDecimal:
        (v['parquet.variable.scale.decimal.mode'] as string).toLowerCase() === 'double'
          ? { mode: 'double' }
          : { mode: 'decimal', scale: v['parquet.variable.scale.decimal.scale'] as number },
    },
    compatibility: canonical(COMPATIBILITIES, v['schema.compatibility'] as string),
    padWidth: v['filename.offset.zero.pad.width'] as number,
    storeKeys: v['store.kafka.keys'] as boolean,
    storeHeaders: v['store.kafka.headers'] as boolean,
    keysFormat: viewFormatSettings(v['keys.format.class'] as string, format),
    headersFormat: viewFormatSettings(v['headers.format.class'] as string, format),
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
      ...(canonical(NULL_BEHAVIORS, v['behavior.on.null.values'] as string) === 'write'
        ? { tombstonePartition: v['tombstone.encoded.partition'] as string }
        : {}),
    },
  };
}

/**
 * A keys or headers file's format: format.class's own settings when it is the same
 * format, else that format's defaults (the format keys of another format than
 * format.class are refused, formatKeyErrors), so no setting is silently applied.
 */
function viewFormatSettings(className: string, valueFormat: FormatSettings): FormatSettings {
  const kind = formatKind(className) ?? 'avro';
  if (kind === valueFormat.kind) return valueFormat;
  switch (kind) {
    case 'json':
      return { kind, decimalFormat: 'BASE64', compression: 'none', compressionLevel: -1 };
    case 'avro':
      return { kind, codec: 'null' };
    default:
      return { kind: 'parquet' };
  }
}

function toFormatSettings(
  v: Readonly<Record<string, unknown>>,
  raw: Readonly<Record<string, unknown>>,
): FormatSettings {
  const kind = formatKind(v['format.class'] as string) ?? 'parquet';
  const compression = (v['s3.compression.type'] as string).toLowerCase() as FileCompression;
  const compressionLevel = v['s3.compression.level'] as number;
  switch (kind) {
    case 'parquet':
      return { kind };
    case 'json':
      return {
        kind,
        decimalFormat: (v['json.decimal.format'] as string).toUpperCase() as JsonDecimalFormat,
        compression,
        compressionLevel,
      };
    case 'bytearray': {
      const given = raw['format.bytearray.separator'] ?? v['format.bytearray.separator'];
      return {
        kind,
        extension: v['format.bytearray.extension'] as string,
        separator: Buffer.from(typeof given === 'string' ? given : '\n', 'utf8'),
        compression,
        compressionLevel,
      };
    }
    case 'avro':
      return { kind, codec: (v['avro.codec'] as string).toLowerCase() as AvroCodec };
  }
}

/** Format keys set for another format than format.class, which would be ignored. */
function formatKeyErrors(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const className = v['format.class'] as string;
  const kind = formatKind(className);
  if (kind === undefined) return [];
  const errors: ConfigError[] = [];
  for (const k of FORMAT_KEYS) {
    const value = v[k.key];
    const given = typeof value === 'string' ? value.toLowerCase() : value;
    const fallback = typeof k.default === 'string' ? k.default.toLowerCase() : k.default;
    if (k.kinds.includes(kind) || value === undefined || given === fallback) continue;
    errors.push({
      key: k.key,
      value,
      message: `applies to ${k.kinds.map((x) => FORMAT_CLASSES[x][1]).join(', ')} only, not format.class=${className}: remove it or change format.class`,
    });
  }
  const compression = (v['s3.compression.type'] as string).toLowerCase();
  if (compression !== 'none' && (kind === 'parquet' || kind === 'avro')) {
    const inside =
      kind === 'parquet'
        ? 'Parquet compresses inside the file: use parquet.codec'
        : 'Avro compresses inside the file: use avro.codec';
    errors.push({
      key: 's3.compression.type',
      value: v['s3.compression.type'],
      message: `not supported: s3.compression.type=${v['s3.compression.type']} with ${FORMAT_CLASSES[kind][1]}; ${inside}`,
    });
  }
  return errors;
}

/** Cross-field checks, one error per offending key (the connector's validate()). */
export function validateSinkConfig(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [
    ...unsupportedKeyErrors(v),
    ...viewFormatErrors(v),
    ...formatKeyErrors(v),
  ];
  const url = v['store.url'] as string;
  errors.push(...validateS3Config(v, url.startsWith('file:')));
  const fileDelim = v['file.delim'] as string;
  const dirDelim = v['directory.delim'] as string;
  if (fileDelim.includes(dirDelim) || dirDelim.includes(fileDelim)) {
    errors.push({
      key: 'file.delim',
      value: fileDelim,
      message: `must not contain directory.delim ('${dirDelim}') nor be contained in it, or file names could not be told from folders`,
    });
  }
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
  const zstdLevel = v[ZSTD_LEVEL_KEY] as number | null;
  const codec = v['parquet.codec'] as string;
  if (zstdLevel !== null && zstdLevel !== undefined && codec.toLowerCase() !== 'zstd') {
    errors.push({
      key: ZSTD_LEVEL_KEY,
      value: zstdLevel,
      message: `applies to parquet.codec=zstd only, not ${codec}: remove it or set parquet.codec=zstd`,
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
  const nullBehavior = (v['behavior.on.null.values'] as string).toLowerCase();
  if (nullBehavior === 'write' && v['store.kafka.keys'] !== true) {
    // Confluent's S3SinkConnectorValidator names both keys.
    for (const key of ['store.kafka.keys', 'behavior.on.null.values']) {
      errors.push({
        key,
        value: v[key],
        message:
          'Writing Kafka record keys to storage is mandatory when tombstone writing is enabled: set store.kafka.keys=true with behavior.on.null.values=write',
      });
    }
  }
  for (const name of v['partition.field.name'] as string[]) {
    const problem = fieldNameProblem(name);
    if (problem !== undefined) {
      errors.push({ key: 'partition.field.name', value: name, message: problem });
    }
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
    try {
      const pathFormat = timeBasedPathFormat(v['path.format'] as string, dirDelim);
      new PathFormatter(pathFormat, 'UTC', 'en');
    } catch (e) {
      errors.push({ key: 'path.format', value: v['path.format'], message: (e as Error).message });
    }
    if ((v['partition.duration.ms'] as number) <= 0) {
      errors.push({
        key: 'partition.duration.ms',
        value: v['partition.duration.ms'],
        message: 'the TimeBased partitioner needs a positive duration',
      });
    }
  }
  const zoned = kind === 'time' || kind === 'daily' || kind === 'hourly';
  if (zoned || (v['rotate.schedule.interval.ms'] as number) > 0) {
    try {
      new PathFormatter('', v.timezone as string, 'en');
    } catch (e) {
      errors.push({ key: 'timezone', value: v.timezone, message: (e as Error).message });
    }
  }
  if (zoned) {
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
