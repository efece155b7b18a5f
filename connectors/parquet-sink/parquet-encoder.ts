/**
 * Buffered columns -> the bytes of one Parquet file. Pure and synchronous: it runs on
 * the task's thread for small files and on the encoder thread for large ones
 * (file-encoder.ts), with the same result. A flat buffer (every column primitive)
 * is written by flat-parquet-encoder.ts, a nested one by hyparquet-writer; which one
 * depends only on the schema.
 *
 * Determinism: the same schema, rows, codec and metadata give the same bytes. The
 * footer holds no wall-clock time and a fixed `created_by`; compressors are
 * deterministic (see codecs.ts). Replays after a crash rely on this to rewrite an
 * object with identical content.
 *
 * Row groups of 122,880 rows (DuckDB's default) keep files comparable in size with
 * DuckDB's and let readers skip by statistics; pages hold about 1 MiB (both encoders).
 */
import { ByteWriter, type ColumnSource, ParquetWriter } from 'hyparquet-writer';
import { codecName, compressorsFor, type ParquetCodec } from './codecs.ts';
import { encodeFlatParquet } from './flat-parquet-encoder.ts';
import type { BufferedColumns } from './row-buffer.ts';
import type { ParquetSchema } from './schema-mapping.ts';

export const CREATED_BY = 'connect-ts parquet-sink';
const ROW_GROUP_ROWS = 122_880;

export interface EncodeOptions {
  codec: ParquetCodec;
  /** parquet.compression.codec.zstd.level, for codec zstd; DEFAULT_ZSTD_LEVEL when absent. */
  zstdLevel?: number;
  /** Key-value metadata for the footer, written in the order given. */
  kv: Array<{ key: string; value: string }>;
}

/** What encoding needs of a ParquetSchema: the footer's elements and the column names. */
export type EncodedSchema = Pick<ParquetSchema, 'elements'> & {
  columns: ReadonlyArray<{ name: string }>;
};

export function encodeParquet(
  schema: EncodedSchema,
  buffered: BufferedColumns,
  options: EncodeOptions,
): Uint8Array {
  if (buffered.layout === 'flat') {
    return encodeFlatParquet(
      schema.elements,
      buffered.columns,
      ROW_GROUP_ROWS,
      options,
      CREATED_BY,
    );
  }
  const columns = buffered.columns;
  const codec = codecName(options.codec);
  const writer = new ByteWriter();
  const columnData: ColumnSource[] = schema.columns.map((c, i) => ({
    name: c.name,
    data: columns[i] as ColumnSource['data'],
  }));
  // Copies: JSON columns get their converted type only after the data is written.
  const elements = schema.elements.map((e) => ({ ...e }));
  const parquet = new ParquetWriter({
    writer,
    schema: elements,
    codec,
    compressors: compressorsFor(codec, options.zstdLevel),
    kvMetadata: options.kv,
    createdBy: CREATED_BY,
  });
  const pending = parquet.write({ columnData, rowGroupSize: ROW_GROUP_ROWS });
  if (pending !== undefined) throw new Error('hyparquet-writer wrote asynchronously');
  // hyparquet-writer re-serializes the values of a converted-type JSON column (a JSON
  // text would be written as a quoted string), so the column is written with the
  // logical type only and the footer gets the converted type too: DuckDB reads JSON
  // by the converted type.
  for (const e of elements) if (e.logical_type?.type === 'JSON') e.converted_type = 'JSON';
  parquet.finish();
  return new Uint8Array(writer.getBuffer());
}
