import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/connect/api/index.ts';
import {
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../src/connect/runtime/config-validation.ts';
import { loadPlugins, type PluginRegistry } from '../../../src/connect/runtime/plugins.ts';
import { getLogger } from '../../../src/util/logger.ts';
import { parquetSinkConfigDefs, toSinkConfig, validateSinkConfig } from '../config.ts';
import { ParquetSinkConnector } from '../parquet-sink-connector.ts';

const pluginDir = fileURLToPath(new URL('..', import.meta.url));
let plugins: PluginRegistry;
beforeAll(async () => {
  plugins = await loadPlugins({ pluginPath: [pluginDir], logger: getLogger('test.plugins') });
}, 60_000);

const BASE = {
  name: 's',
  'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
  topics: 'orders',
  'flush.size': '10',
  's3.bucket.name': 'lake',
  'store.url': 'http://127.0.0.1:9000',
};

/** /config/validate's errors, by key. */
function validate(extra: Record<string, string>): Record<string, string[]> {
  const infos = validateConnectorConfig(plugins, { ...BASE, ...extra }, validationContext('s', []));
  const out: Record<string, string[]> = {};
  for (const { value } of infos.configs) {
    if (value && value.errors.length > 0) out[value.name] = value.errors;
  }
  return out;
}

/**
 * Every key of Confluent's S3 sink 10.x/11.x (S3SinkConnectorConfig, StorageSinkConnector-
 * Config, StorageCommonConfig, PartitionerConfig, HiveConfig), each with a value that asks
 * for something; each must be a definition of the sink or refused by name.
 */
const CONFLUENT_KEYS: Record<string, string> = {
  's3.bucket.name': 'lake',
  's3.object.tagging': 'true',
  's3.object.tagging.key.value.pairs': 'team:data',
  's3.object.behavior.on.tagging.error': 'fail',
  's3.region': 'eu-west-1',
  's3.part.size': String(6 * 1024 * 1024),
  's3.credentials.provider.class': 'com.amazonaws.auth.EnvironmentVariableCredentialsProvider',
  'aws.access.key.id': 'AKIA',
  'aws.secret.access.key': 'secret',
  's3.ssea.name': 'AES256',
  's3.sse.customer.key': Buffer.alloc(32, 7).toString('base64'),
  's3.sse.kms.key.id': 'arn:aws:kms:key',
  's3.acl.canned': 'bucket-owner-full-control',
  's3.wan.mode': 'true',
  's3.compression.type': 'gzip',
  's3.compression.level': '6',
  'json.decimal.format': 'NUMERIC',
  's3.part.retries': '5',
  's3.retry.backoff.ms': '100',
  'format.bytearray.extension': '.dat',
  'format.bytearray.separator': '|',
  's3.proxy.url': 'http://proxy:3128',
  's3.proxy.user': 'u',
  's3.proxy.password': 'p',
  's3.http.send.expect.continue': 'false',
  'behavior.on.null.values': 'write',
  'report.null.values.to.dlq': 'false',
  'max.write.duration.ms': '1000',
  'rotate.file.on.partition.change': 'false',
  's3.path.style.access.enabled': 'false',
  'store.kafka.keys': 'true',
  'store.kafka.headers': 'true',
  'keys.format.class': 'io.confluent.connect.s3.format.json.JsonFormat',
  'headers.format.class': 'io.confluent.connect.s3.format.json.JsonFormat',
  's3.elastic.buffer.enable': 'true',
  's3.elastic.buffer.init.capacity': '8192',
  'tombstone.encoded.partition': 'deleted',
  's3.schema.partition.affix.type': 'PREFIX',
  's3.send.digest': 'true',
  'enable.conditional.writes': 'false',
  'max.files.scan.limit': '10',
  'partitioner.max.open.files': '10',
  'format.class': 'io.confluent.connect.s3.format.avro.AvroFormat',
  'flush.size': '5',
  'rotate.interval.ms': '1000',
  'rotate.schedule.interval.ms': '1000',
  'retry.backoff.ms': '100',
  'shutdown.timeout.ms': '1000',
  'filename.offset.zero.pad.width': '20',
  'schemas.cache.config': '10',
  'enhanced.avro.schema.support': 'true',
  'connect.meta.data': 'true',
  'avro.codec': 'deflate',
  'parquet.codec': 'brotli',
  'allow.optional.map.keys': 'true',
  'schema.compatibility': 'BACKWARD',
  'storage.class': 'io.confluent.connect.hdfs.storage.HdfsStorage',
  'store.url': 'http://minio:9000',
  'topics.dir': 'lake',
  'directory.delim': '_',
  'file.delim': '-',
  'partitioner.class': 'io.confluent.connect.storage.partitioner.FieldPartitioner',
  'partition.field.name': 'id',
  'partition.duration.ms': '3600000',
  'path.format': 'YYYY',
  locale: 'fr',
  timezone: 'Europe/Paris',
  'timestamp.extractor': 'RecordField',
  'timestamp.field': 'ts',
  'hive.integration': 'true',
  'hdfs.url': 'hdfs://nn:8020',
  'logs.dir': 'logs',
};

describe('Confluent S3 sink keys', () => {
  const defined = new Set(parquetSinkConfigDefs.map((d) => d.name));

  it.each(Object.entries(CONFLUENT_KEYS).filter(([k]) => !defined.has(k)))(
    '%s, which the sink does not define, is refused by name',
    (key, value) => {
      const errors = validate({ [key]: value })[key] ?? [];

      expect(errors.join(' ')).toContain(`not supported: ${key}`);
    },
  );

  it('a refused key fails the connector at start too, not only on validate', () => {
    const connector = new ParquetSinkConnector();

    expect(() => connector.start({ ...BASE, 'hive.integration': 'true' })).toThrow(
      /not supported: hive.integration/,
    );
  });

  it("values that ask for what the sink does anyway pass (Confluent's defaults, false for features not here)", () => {
    expect(
      validate({
        'avro.codec': 'null',
        'hive.integration': 'false',
        's3.send.digest': 'FALSE',
        's3.schema.partition.affix.type': 'NONE',
        'partitioner.max.open.files': '-1',
      }),
    ).toEqual({});
  });

  it.each([
    ['format.class', 'io.confluent.connect.s3.format.csv.CsvFormat'],
    ['parquet.codec', 'lz4'],
    ['storage.class', 'io.confluent.connect.gcs.storage.GcsStorage'],
    ['s3.credentials.provider.class', 'com.example.MyProvider'],
    ['s3.credentials.provider.class', 'com.amazonaws.auth.SystemPropertiesCredentialsProvider'],
    ['s3.credentials.provider.token.file', '/var/run/token'],
  ])('%s=%s is refused by name', (key, value) => {
    const messages = validate({ [key]: value })[key] ?? [];

    expect(messages.join(' ')).toContain(`not supported: ${key}`);
  });

  it.each([
    ['keys.format.class', 'io.confluent.connect.s3.format.bytearray.ByteArrayFormat'],
    ['headers.format.class', 'io.confluent.connect.s3.format.csv.CsvFormat'],
  ])('%s=%s is refused by name: keys and headers files are Parquet, Avro or JSON', (key, value) => {
    const messages = validate({ [key]: value })[key] ?? [];

    expect(messages.join(' ')).toContain(`not supported: ${key}=${value}`);
  });

  it.each([
    ['store.kafka.keys', 'keys.format.class'],
    ['store.kafka.headers', 'headers.format.class'],
  ])("%s=true without %s passes: Confluent's default there, AvroFormat, is written", (store) => {
    expect(validate({ [store]: 'true' })).toEqual({});
  });

  it("store.kafka.keys/headers with ParquetFormat, by Confluent's class name or the alias, pass", () => {
    expect(
      validate({
        'store.kafka.keys': 'true',
        'keys.format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
        'store.kafka.headers': 'true',
        'headers.format.class': 'ParquetFormat',
      }),
    ).toEqual({});
  });

  it('enumerations are read in any case, as Confluent reads them', () => {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      ...BASE,
      'behavior.on.null.values': 'WRITE',
      'store.kafka.keys': 'true', // what Confluent requires with write
      'keys.format.class': 'ParquetFormat',
      'parquet.codec': 'ZSTD',
      'schema.compatibility': 'backward',
      's3.ssea.name': 'aws:KMS',
      's3.acl.canned': 'Bucket-Owner-Full-Control',
      's3.object.tagging': 'true',
      's3.object.behavior.on.tagging.error': 'FAIL',
    });
    expect(parsed.errors).toEqual([]);
    expect(validateSinkConfig(parsed.values)).toEqual([]);

    const c = toSinkConfig(parsed.values);

    expect([c.nullBehavior, c.codec, c.compatibility]).toEqual(['write', 'zstd', 'BACKWARD']);
    const features = c.store.kind === 's3' ? c.store.features : undefined;
    expect(features?.sse).toEqual({ kind: 'kms', algorithm: 'aws:kms' });
    expect(features?.cannedAcl).toBe('bucket-owner-full-control');
    expect(features?.tagging?.onError).toBe('fail');
  });

  it.each([
    [
      { 's3.sse.customer.key': Buffer.alloc(32).toString('base64') },
      's3.sse.customer.key',
      'AES256',
    ],
    [
      { 's3.ssea.name': 'AES256', 's3.sse.customer.key': 'c2hvcnQ=' },
      's3.sse.customer.key',
      '256-bit',
    ],
    [{ 's3.sse.kms.key.id': 'k', 's3.ssea.name': 'AES256' }, 's3.sse.kms.key.id', 'aws:kms'],
    [{ 's3.proxy.user': 'u' }, 's3.proxy.user', 's3.proxy.url'],
    [{ 's3.wan.mode': 'true' }, 's3.wan.mode', 'store.url'],
    [
      { 'sts.role.arn': 'arn:aws:iam::1:role/r' },
      'sts.role.arn',
      'AwsAssumeRoleCredentialsProvider',
    ],
    [
      {
        's3.credentials.provider.class':
          'io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider',
      },
      's3.credentials.provider.sts.role.arn',
      'needs',
    ],
    [{ 'file.delim': '/' }, 'file.delim', 'directory.delim'],
  ])('a combination Confluent would ignore is refused: %o', (extra, key, words) => {
    expect((validate(extra)[key] ?? []).join(' ')).toContain(words);
  });

  it('S3-only settings are refused with a local folder', () => {
    const errors = validate({ 'store.url': 'file:///tmp/lake', 's3.ssea.name': 'AES256' });

    expect(errors['s3.ssea.name']?.join(' ')).toContain('S3 bucket only');
  });

  it('a full Confluent S3 sink config with its defaults spelled out passes', () => {
    const errors = validate({
      'format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
      'storage.class': 'io.confluent.connect.s3.storage.S3Storage',
      'partitioner.class': 'io.confluent.connect.storage.partitioner.DefaultPartitioner',
      's3.ssea.name': '',
      's3.acl.canned': '',
      's3.compression.type': 'none',
      's3.wan.mode': 'false',
      'enable.conditional.writes': 'true',
      'schemas.cache.config': '1000',
      'behavior.on.null.values': 'ignore',
      'report.null.values.to.dlq': 'true',
    });

    expect(errors).toEqual({});
    expect(
      configErrorMessages(validateConnectorConfig(plugins, BASE, validationContext('s', []))),
    ).toEqual([]);
  });
});
