/**
 * Keys of Confluent's S3 sink (S3SinkConnectorConfig, StorageSinkConnectorConfig,
 * StorageCommonConfig, PartitionerConfig, HiveConfig) and of the HDFS sink's storage
 * layer that this sink does not implement. Each is refused by validate() and at start
 * ("not supported: <key>; <what to do>"), so a Confluent config relying on one fails
 * on create (HTTP 400) and on /config/validate rather than running without it.
 *
 * Keys implemented are the definitions of config.ts and s3-config.ts. An entry with
 * `accepts` lets through the values that ask for what the sink does anyway (Confluent's
 * default where it is ours, `false` for a feature not here), compared in any case, as
 * Confluent compares enumerations. Keys of Hive integration other than
 * hive.integration (hive.metastore.uris, hive.database, ..., schema.generator.class)
 * pass: Confluent reads them only with hive.integration=true, which is refused here.
 */
import type { ConfigError } from '../../src/connect/api/index.ts';
import { isUnknownCredentialsKey } from './s3-config.ts';

interface UnsupportedKey {
  name: string;
  advice: string;
  /** The values (lower case) that ask for what the sink does anyway. */
  accepts?: readonly string[];
}

const NOT_YET = 'not supported yet';
const NO_AVRO_SCHEMA = `${NOT_YET}: Parquet files here carry their Parquet schema, not an Avro schema converted by AvroData`;
const HDFS =
  'HDFS is not a store of this sink; write to S3 (s3.bucket.name) or a folder (store.url=file:///path)';

const KEYS: readonly UnsupportedKey[] = [
  // AvroData's settings: schemas are converted as avro-file.ts says, with no such options.
  { name: 'enhanced.avro.schema.support', advice: NO_AVRO_SCHEMA, accepts: ['false'] },
  { name: 'connect.meta.data', advice: NO_AVRO_SCHEMA, accepts: ['false'] },
  { name: 'allow.optional.map.keys', advice: NO_AVRO_SCHEMA, accepts: ['false'] },

  // S3 features not here.
  {
    name: 's3.send.digest',
    advice: `${NOT_YET}: uploads carry the SDK's CRC32 checksum, which S3 verifies, not Content-MD5`,
    accepts: ['false'],
  },
  {
    name: 's3.schema.partition.affix.type',
    advice: `${NOT_YET}: folders never carry the schema name`,
    accepts: ['none'],
  },
  {
    name: 'max.write.duration.ms',
    advice: `${NOT_YET}: put() buffers and returns, uploads run in the background`,
    accepts: ['9223372036854775807', String(Number.MAX_SAFE_INTEGER)],
  },
  {
    name: 'partitioner.max.open.files',
    advice: `${NOT_YET}: a topic partition keeps one open file per folder; bound memory with buffer.memory.max.bytes`,
    accepts: ['-1'],
  },
  {
    name: 'max.files.scan.limit',
    advice: `${NOT_YET}: recovery reads the newest file's footer (recovery.ts), it does not scan`,
    accepts: ['100'],
  },
  // Storage layers not here.
  {
    name: 'hive.integration',
    advice: `${NOT_YET}: register the files as an external table instead (Athena, Glue, Trino, or DuckDB's read_parquet with hive_partitioning)`,
    accepts: ['false'],
  },
  {
    name: 'shutdown.timeout.ms',
    advice:
      "not a key of the S3 sink (it bounds the HDFS sink's Hive updates); task.shutdown.graceful.timeout.ms bounds a task's stop",
  },
  ...[
    'hdfs.url',
    'hadoop.conf.dir',
    'hadoop.home',
    'logs.dir',
    'hdfs.authentication.kerberos',
    'connect.hdfs.principal',
    'connect.hdfs.keytab',
    'hdfs.namenode.principal',
    'kerberos.ticket.renew.period.ms',
  ].map((name) => ({ name, advice: HDFS })),
];

const BY_NAME = new Map(KEYS.map((k) => [k.name, k]));

/** Every refused key. */
export const UNSUPPORTED_KEYS: readonly string[] = KEYS.map((k) => k.name);

/** One error per key of `values` that Confluent defines and this sink does not implement. */
export function unsupportedKeyErrors(values: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (isUnknownCredentialsKey(key)) {
      errors.push({
        key,
        value,
        message: `not supported: ${key}; the only provider settings read are s3.credentials.provider.sts.role.arn, .sts.role.session.name, .sts.role.external.id and .sts.region`,
      });
      continue;
    }
    const k = BY_NAME.get(key);
    if (!k) continue;
    const given = typeof value === 'string' ? value.trim().toLowerCase() : String(value);
    if (k.accepts?.includes(given)) continue;
    errors.push({ key, value, message: `not supported: ${key}; ${k.advice}` });
  }
  return errors;
}
