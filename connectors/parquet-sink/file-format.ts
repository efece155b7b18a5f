/**
 * `format.class`: which kind of file the sink writes, by Confluent's class names
 * (io.confluent.connect.s3.format.<kind>.<Kind>Format) or their short names, and the
 * extension each gives a file name (file-naming.ts), as Confluent's formats name them:
 *
 *   ParquetFormat    `.<codec>.parquet` (parquet.codec), compressed inside
 *   JsonFormat       `.json`, `.json.gz` with s3.compression.type=gzip
 *   ByteArrayFormat  format.bytearray.extension (`.bin`), `+ .gz` with gzip
 *   AvroFormat       `.avro`, compressed inside (avro.codec)
 *
 * Parquet files carry their commit group in their footer (recovery.ts); the other
 * formats have no place for it that every reader ignores, so theirs goes into the
 * object's metadata instead (S3 user metadata, a hidden file beside a local file:
 * object-store.ts).
 *
 * Other Confluent formats (CsvFormat, OrcFormat, SafeByteArrayFormat, custom classes)
 * are refused by name (config.ts).
 */
import type { ParquetCodec } from './codecs.ts';
import { parquetExtension } from './file-naming.ts';

export type FormatKind = 'parquet' | 'json' | 'bytearray' | 'avro';

const CONFLUENT_FORMATS = 'io.confluent.connect.s3.format.';

/** Accepted format.class values, Confluent's class name first (messages quote it). */
export const FORMAT_CLASSES: Readonly<Record<FormatKind, readonly string[]>> = {
  parquet: [`${CONFLUENT_FORMATS}parquet.ParquetFormat`, 'ParquetFormat'],
  json: [`${CONFLUENT_FORMATS}json.JsonFormat`, 'JsonFormat'],
  bytearray: [`${CONFLUENT_FORMATS}bytearray.ByteArrayFormat`, 'ByteArrayFormat'],
  avro: [`${CONFLUENT_FORMATS}avro.AvroFormat`, 'AvroFormat'],
};

/** The kind a format.class value names; undefined for a class not written here. */
export function formatKind(className: string): FormatKind | undefined {
  for (const [kind, names] of Object.entries(FORMAT_CLASSES)) {
    if (names.includes(className)) return kind as FormatKind;
  }
  return undefined;
}

/** s3.compression.type: whole-file compression of the row formats (JSON, ByteArray). */
export type FileCompression = 'none' | 'gzip';

/** Confluent's Avro container codecs (avro.codec); bzip2 and xz are refused (config.ts). */
export type AvroCodec = 'null' | 'deflate' | 'snappy';

/** How Decimal values are written in JSON (json.decimal.format, JsonConverter's decimal.format). */
export type JsonDecimalFormat = 'BASE64' | 'NUMERIC';

/** The settings of the configured format, from config.ts. */
export type FormatSettings =
  | { kind: 'parquet' }
  | {
      kind: 'json';
      decimalFormat: JsonDecimalFormat;
      compression: FileCompression;
      /** s3.compression.level: -1 is zlib's default. */
      compressionLevel: number;
    }
  | {
      kind: 'bytearray';
      /** format.bytearray.extension, with its dot. */
      extension: string;
      /** format.bytearray.separator as bytes (UTF-8). */
      separator: Uint8Array;
      compression: FileCompression;
      compressionLevel: number;
    }
  | { kind: 'avro'; codec: AvroCodec };

/** The file name extension of the format's value files. */
export function formatExtension(f: FormatSettings, parquetCodec: ParquetCodec): string {
  switch (f.kind) {
    case 'parquet':
      return parquetExtension(parquetCodec);
    case 'json':
      return `.json${f.compression === 'gzip' ? '.gz' : ''}`;
    case 'bytearray':
      return `${f.extension}${f.compression === 'gzip' ? '.gz' : ''}`;
    case 'avro':
      return '.avro';
  }
}
