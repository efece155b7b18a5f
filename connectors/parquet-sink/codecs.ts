/**
 * Compression codecs for the Parquet writer, keyed by `parquet.codec`.
 *
 * hyparquet-writer ships a pure-JS snappy; the native `snappy` binding is about
 * twice as fast on the same pages (bench/parquet-sink/writer-choice.ts), so it is
 * plugged in, with zstd from `zstd-napi`, LZ4_RAW from `lz4-napi` (the binding the
 * broker's LZ4 record batches use) and gzip and brotli from node:zlib. Every one is
 * deterministic for the same input and level, which the replay guarantee needs.
 *
 * Not here, and refused by config.ts: LZO (no binding among the dependencies, and
 * liblzo2 is GPL) and the LZ4 codec, which parquet-format deprecates because writers
 * framed it differently (parquet-mr with Hadoop's framing, early Arrow a bare block);
 * LZ4_RAW replaced it and is what current readers take.
 */
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import { compressSync as lz4BlockCompress } from 'lz4-napi';
import { compressSync as snappyCompress } from 'snappy';
import { compress as zstdCompress } from 'zstd-napi';

export type ParquetCodec = 'snappy' | 'gzip' | 'zstd' | 'brotli' | 'lz4_raw' | 'none';
export type ParquetCodecName = 'SNAPPY' | 'GZIP' | 'ZSTD' | 'BROTLI' | 'LZ4_RAW' | 'UNCOMPRESSED';

/** parquet-mr's `parquet.compression.codec.zstd.level` default, and zstd's own. */
export const DEFAULT_ZSTD_LEVEL = 3;
/** `parquet.compression.codec.zstd.level` values: zstd's regular levels (not its negative "fast" ones). */
export const ZSTD_LEVELS = { min: 1, max: 22 } as const;
/**
 * Brotli's own default quality is its slowest (11); 8 is Arrow's (so pyarrow's)
 * default for Parquet pages: most of the ratio at a fraction of the time.
 */
const BROTLI_QUALITY = 8;

type Compressor = (input: Uint8Array) => Uint8Array;

function compressor(codec: Exclude<ParquetCodecName, 'UNCOMPRESSED'>, zstdLevel: number) {
  switch (codec) {
    case 'SNAPPY':
      return (input: Uint8Array) => snappyCompress(input);
    case 'ZSTD':
      return (input: Uint8Array) => zstdCompress(input, { compressionLevel: zstdLevel });
    // gzip's header carries an mtime; zlib writes 0 there, so output is reproducible.
    case 'GZIP':
      return (input: Uint8Array) => gzipSync(input);
    case 'BROTLI':
      return (input: Uint8Array) =>
        brotliCompressSync(input, {
          params: {
            [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [zlib.BROTLI_PARAM_SIZE_HINT]: input.byteLength,
          },
        });
    case 'LZ4_RAW':
      return lz4Raw;
  }
}

/**
 * LZ4_RAW is a bare LZ4 block (parquet-format's Compression.md): lz4-napi puts the
 * uncompressed length, 4 bytes little-endian, before the block, and that is cut off.
 */
function lz4Raw(input: Uint8Array): Uint8Array {
  const framed = lz4BlockCompress(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  return framed.subarray(4);
}

export function codecName(codec: ParquetCodec): ParquetCodecName {
  return codec === 'none' ? 'UNCOMPRESSED' : (codec.toUpperCase() as ParquetCodecName);
}

/** The compressor table hyparquet-writer takes, holding the one codec asked for. */
export function compressorsFor(
  codec: ParquetCodecName,
  zstdLevel = DEFAULT_ZSTD_LEVEL,
): Partial<Record<string, Compressor>> {
  const c = compressorFor(codec, zstdLevel);
  return c === undefined ? {} : { [codec]: c };
}

/** The compressor of a codec, or undefined for UNCOMPRESSED. */
export function compressorFor(
  codec: ParquetCodecName,
  zstdLevel = DEFAULT_ZSTD_LEVEL,
): Compressor | undefined {
  return codec === 'UNCOMPRESSED' ? undefined : compressor(codec, zstdLevel);
}
