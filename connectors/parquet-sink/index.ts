/**
 * Plugin entry: the Parquet sink (local folder or S3), answering to Confluent's
 * S3 sink class name so existing connector configs run unchanged.
 *
 * Folders are named as Confluent's partitioners name them (partitioner.ts,
 * field-partitioner.ts: `country=de`, `country=null`, values unescaped), and with
 * behavior.on.null.values=write tombstones go to Confluent's tombstone folder
 * (tombstone.encoded.partition) as keys and headers files only.
 *
 * store.kafka.keys / store.kafka.headers write Confluent's keys and headers files beside
 * each value file (record-views.ts), so buckets are interchangeable with Confluent's.
 *
 * Formats (format.class, file-format.ts): ParquetFormat (the default), JsonFormat (one
 * JSON value a line, `.json`, `.json.gz` with s3.compression.type=gzip: json-value.ts),
 * ByteArrayFormat (raw bytes values, each followed by format.bytearray.separator, in
 * format.bytearray.extension files) and AvroFormat (container files, avro.codec null,
 * deflate or snappy: avro-file.ts), by Confluent's class names or their short names.
 * Every format rotates, commits and recovers the same way (recovery.ts: row formats
 * keep their commit group in the object's metadata).
 *
 * Confluent parity: every key of Confluent's S3 sink is implemented with its semantics
 * (config.ts, s3-config.ts: encryption, ACL, tagging, proxy, credentials providers,
 * Confluent's file names and delimiters) or refused by name (unsupported-keys.ts).
 * What it does not do, and refuses when asked:
 *   - other formats (CsvFormat, OrcFormat, SafeByteArrayFormat, custom classes),
 *     avro.codec bzip2 and xz, s3.compression.type=gzip with ParquetFormat or
 *     AvroFormat (they compress inside), a format's keys set with another format;
 *   - store.kafka.keys / store.kafka.headers with a format other than ParquetFormat;
 *   - keys and headers files in another format than Parquet (keys.format.class and
 *     headers.format.class other than ParquetFormat; Confluent's default, AvroFormat,
 *     included: with store.kafka.keys/headers the class must be set);
 *   - partitioner classes and timestamp extractors other than Confluent's own
 *     (Default, Field, TimeBased, Daily, Hourly; Record, RecordField, Wallclock);
 *   - Hive integration, HDFS storage, Content-MD5 digests (s3.send.digest), schema-name
 *     folders (s3.schema.partition.affix.type), max.write.duration.ms;
 *   - parquet.codec lzo and lz4 (Parquet's deprecated Hadoop-framed LZ4; lz4_raw is written);
 *   - credential providers without an SDK v3 counterpart (Java system properties,
 *     custom classes).
 * Accepted with nothing to do here, as documented per key: s3.elastic.buffer.*,
 * schemas.cache.config, enable.conditional.writes (replays rewrite identical objects).
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { parquetSinkConfigDefs } from './config.ts';
import { ParquetSinkConnector } from './parquet-sink-connector.ts';
import { ParquetSinkTask } from './parquet-sink-task.ts';
import { PARQUET_SINK_VERSION } from './version.ts';

export default definePlugins({
  type: 'sink',
  className: 'connect.parquet.ParquetSinkConnector',
  aliases: ['io.confluent.connect.s3.S3SinkConnector'],
  version: PARQUET_SINK_VERSION,
  doc: 'Writes topics as Parquet (or JSON, raw bytes or Avro) files to a local folder or an S3 bucket, exactly once',
  configDefs: parquetSinkConfigDefs,
  createConnector: () => new ParquetSinkConnector(),
  createTask: () => new ParquetSinkTask(),
});
