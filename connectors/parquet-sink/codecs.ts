/**
 * Compression codecs for the Parquet writer, keyed by `parquet.codec`.
 *
 * hyparquet-writer ships a pure-JS snappy; the native `snappy` binding is about
 * twice as fast on the same pages (bench/parquet-sink/writer-choice.ts), so it is
 * plugged in, with zstd from `zstd-napi` and gzip from node:zlib. All three are
 * deterministic for the same input and level, which the replay guarantee needs.
 */
import { gzipSync } from 'node:zlib';
import { compressSync as snappyCompress } from 'snappy';
import { compress as zstdCompress } from 'zstd-napi';

export type ParquetCodec = 'snappy' | 'gzip' | 'zstd' | 'none';
export type ParquetCodecName = 'SNAPPY' | 'GZIP' | 'ZSTD' | 'UNCOMPRESSED';

type Compressor = (input: Uint8Array) => Uint8Array;

const compressors: Record<Exclude<ParquetCodecName, 'UNCOMPRESSED'>, Compressor> = {
  SNAPPY: (input) => snappyCompress(input),
  // Level 3 is zstd's default and what DuckDB and parquet-mr use, so sizes compare.
  ZSTD: (input) => zstdCompress(input, { compressionLevel: 3 }),
  // gzip's header carries an mtime; zlib writes 0 there, so output is reproducible.
  GZIP: (input) => gzipSync(input),
};

export function codecName(codec: ParquetCodec): ParquetCodecName {
  return codec === 'none' ? 'UNCOMPRESSED' : (codec.toUpperCase() as ParquetCodecName);
}

/** The compressor table hyparquet-writer takes, holding the one codec asked for. */
export function compressorsFor(codec: ParquetCodecName): Partial<Record<string, Compressor>> {
  const compressor = compressorFor(codec);
  return compressor === undefined ? {} : { [codec]: compressor };
}

/** The compressor of a codec, or undefined for UNCOMPRESSED. */
export function compressorFor(codec: ParquetCodecName): Compressor | undefined {
  return codec === 'UNCOMPRESSED' ? undefined : compressors[codec];
}
