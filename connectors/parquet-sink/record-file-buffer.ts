/**
 * The buffered records of one open file in a row format (JsonFormat, ByteArrayFormat,
 * AvroFormat: file-format.ts), the counterpart of row-buffer.ts for Parquet.
 *
 * JSON and ByteArray records are encoded as they are appended (one JSON text, or the
 * value's bytes), so a record that cannot be written is refused by append() with
 * nothing buffered, and closing a file only joins the pieces with their separators
 * and, with s3.compression.type=gzip, gzips the whole (one gzip member, so every gzip
 * reader takes it; level s3.compression.level, deterministic for the same input). A
 * JSON file is `<json>\n` per record; a ByteArray file `<bytes><separator>` per
 * record, as Confluent writes them (each record followed by the separator, the last
 * one too).
 *
 * Avro records keep their values: the file's schema is the group's, which may grow
 * while the file is open (schema-evolution.ts), so they are converted when the file
 * closes (avro-file.ts); append() checks each one against the schema it is appended
 * under, so a value the file could not hold is refused there too.
 *
 * Encoding is synchronous and runs on the task's thread: it is a join (and a gzip or
 * an Avro block encoding), not worth the round trip to an encoder thread.
 */
import { gzipSync } from 'node:zlib';
import { DataException, type Schema, type SinkRecord } from '../../src/connect/api/index.ts';
import { AvroFileWriter } from './avro-file.ts';
import type { FormatSettings } from './file-format.ts';
import { jsonValue } from './json-value.ts';
import type { ParquetSchema } from './schema-mapping.ts';

/** What the writer needs of a file buffer; RowBuffer (Parquet) has the same shape. */
export interface RecordFileBuffer {
  /** The group's schema (its `valueSchema` is the Connect schema). */
  readonly schema: ParquetSchema;
  readonly rows: number;
  readonly estimatedBytes: number;
  append(value: unknown, record: SinkRecord): void;
  dropLast(): void;
  withSchema(schema: ParquetSchema): RecordFileBuffer;
  /** The finished file's bytes; the buffer is not used after. */
  encode(): Uint8Array;
}

/**
 * A row-format file's schema: only the Connect schema matters, no Parquet columns.
 * Throws a SchemaMappingError for a schema the format cannot write (Avro: avro-file.ts).
 */
export function rowFormatSchema(
  valueSchema: Schema,
  format: Exclude<FormatSettings, { kind: 'parquet' }>,
): ParquetSchema {
  // Made now, so a schema Avro cannot hold is refused before it would cut the group.
  if (format.kind === 'avro') new AvroFileWriter(valueSchema, format.codec);
  return {
    elements: [],
    columns: [],
    valueSchema,
    types: { debeziumTypes: 'as-is', variableScaleDecimal: { mode: 'double' } },
  };
}

/**
 * `schemaOf` gives the schema a JSON text is written under: the value's for value
 * files, the key's for keys files (record-views.ts), as Confluent's JsonFormat writes
 * each view under its own schema.
 */
export function newRecordFileBuffer(
  format: Exclude<FormatSettings, { kind: 'parquet' }>,
  schema: ParquetSchema,
  schemaOf: (record: SinkRecord) => Schema | null | undefined = (r) => r.valueSchema,
): RecordFileBuffer {
  return format.kind === 'avro'
    ? new AvroFileBuffer(format.codec, schema)
    : new PieceBuffer(format, schema, schemaOf);
}

const NEWLINE = new Uint8Array([0x0a]);
/** What a buffered piece costs beyond its bytes (array slot, object header): a rough constant. */
const PIECE_OVERHEAD = 32;

/** JSON lines or ByteArray values: one encoded piece per record. */
class PieceBuffer implements RecordFileBuffer {
  /**
   * Encoded records. JSON texts are turned into bytes at once: kept as strings they
   * stay concatenation trees, several times their size, until the file is joined.
   */
  private pieces: Uint8Array[] = [];
  private bytes = 0;

  constructor(
    private readonly format: Extract<FormatSettings, { kind: 'json' | 'bytearray' }>,
    readonly schema: ParquetSchema,
    private readonly schemaOf: (record: SinkRecord) => Schema | null | undefined,
  ) {}

  get rows(): number {
    return this.pieces.length;
  }

  get estimatedBytes(): number {
    return this.bytes + this.pieces.length * PIECE_OVERHEAD;
  }

  append(value: unknown, record: SinkRecord): void {
    const piece =
      this.format.kind === 'json'
        ? Buffer.from(jsonValue(this.schemaOf(record), value, this.format.decimalFormat), 'utf8')
        : rawBytes(record, value);
    this.pieces.push(piece);
    this.bytes += piece.byteLength;
  }

  dropLast(): void {
    const piece = this.pieces.pop();
    if (piece !== undefined) this.bytes -= piece.byteLength;
  }

  withSchema(schema: ParquetSchema): RecordFileBuffer {
    const next = new PieceBuffer(this.format, schema, this.schemaOf);
    next.pieces = this.pieces;
    next.bytes = this.bytes;
    return next;
  }

  encode(): Uint8Array {
    const separator = this.format.kind === 'json' ? NEWLINE : this.format.separator;
    const parts: Uint8Array[] = [];
    for (const p of this.pieces) parts.push(p, separator);
    const file = Buffer.concat(parts);
    this.pieces = [];
    if (this.format.compression !== 'gzip') return file;
    return gzipSync(file, { level: this.format.compressionLevel });
  }
}

/**
 * ByteArrayFormat takes what ByteArrayConverter takes: bytes, under a bytes schema or
 * none. Anything else (a string, a struct, a null) is refused by name, as Confluent's
 * converter refuses it.
 */
function rawBytes(record: SinkRecord, value: unknown): Uint8Array {
  const schema = record.valueSchema;
  if (schema && schema.type !== 'bytes') {
    throw new DataException(
      `ByteArrayFormat writes bytes values only, and the value schema is ${schema.name ?? schema.type} (use value.converter=org.apache.kafka.connect.converters.ByteArrayConverter, or JsonFormat)`,
    );
  }
  if (!(value instanceof Uint8Array)) {
    const got = value === null || value === undefined ? 'null' : typeof value;
    throw new DataException(
      `ByteArrayFormat writes bytes values only, and the value is ${got} (use value.converter=org.apache.kafka.connect.converters.ByteArrayConverter, or JsonFormat)`,
    );
  }
  return value;
}

/**
 * Avro values, converted into the container file when it closes (avro-file.ts). Each
 * is checked against the schema of the file when appended; after the schema grew
 * (schema-evolution.ts: added optional fields, dropped fields) the earlier values
 * still convert under it.
 */
class AvroFileBuffer implements RecordFileBuffer {
  private values: unknown[] = [];
  private sizes: number[] = [];
  private bytes = 0;
  private readonly writer: AvroFileWriter;

  constructor(
    private readonly codec: Extract<FormatSettings, { kind: 'avro' }>['codec'],
    readonly schema: ParquetSchema,
  ) {
    this.writer = new AvroFileWriter(schema.valueSchema, codec);
  }

  get rows(): number {
    return this.values.length;
  }

  get estimatedBytes(): number {
    return this.bytes + this.values.length * PIECE_OVERHEAD;
  }

  append(value: unknown): void {
    const size = this.writer.check(value);
    this.values.push(value);
    this.sizes.push(size);
    this.bytes += size;
  }

  dropLast(): void {
    if (this.values.length === 0) return;
    this.values.pop();
    this.bytes -= this.sizes.pop() as number;
  }

  withSchema(schema: ParquetSchema): RecordFileBuffer {
    const next = new AvroFileBuffer(this.codec, schema);
    next.values = this.values;
    next.sizes = this.sizes;
    next.bytes = this.bytes;
    return next;
  }

  encode(): Uint8Array {
    const file = this.writer.encode(this.values);
    this.values = [];
    return file;
  }
}
