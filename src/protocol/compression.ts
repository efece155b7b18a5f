/**
 * The record batch compression codecs, by the id stored in attributes bits 0-2.
 *
 * Formats, as Java and librdkafka producers write them:
 * - 1 gzip: a gzip member (RFC 1952).
 * - 2 snappy: the xerial "snappy-java" stream framing — an 8-byte magic
 *   (0x82 "SNAPPY" 0x00), two big-endian i32 versions (1, 1), then chunks of
 *   i32 length + one raw snappy block. Raw snappy (no framing) is accepted on
 *   decompress too, because some clients (older kafkajs snappy plugins) send it.
 * - 3 lz4: the LZ4 frame format (magic 0x184D2204), independent or linked blocks,
 *   with or without checksums; kafkajs-lz4 and librdkafka both write frames.
 * - 4 zstd: a zstd frame.
 *
 * All calls are synchronous: the broker decompresses only where it must look inside
 * a batch (keys of compacted topics, the cleaner, ListOffsets by timestamp), and a
 * synchronous call keeps that on the broker thread without reordering appends.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { lz4FrameAtLevel } from './lz4-hc.ts';

export const CompressionCodec = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
  zstd: 4,
} as const;
export type CompressionCodec = (typeof CompressionCodec)[keyof typeof CompressionCodec];

export const codecNames: Record<CompressionCodec, string> = {
  0: 'none',
  1: 'gzip',
  2: 'snappy',
  3: 'lz4',
  4: 'zstd',
};

export function isCompressionCodec(id: number): id is CompressionCodec {
  return Number.isInteger(id) && id >= 0 && id <= 4;
}

/** A compressed payload that its codec could not decode. */
export class CompressionError extends Error {
  override readonly name = 'CompressionError';
  constructor(
    readonly codec: number,
    message: string,
  ) {
    super(message);
  }
}

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16; // magic + version i32 + compatible version i32
/** snappy-java's default block size; librdkafka uses the same, so batches look alike. */
const XERIAL_BLOCK_BYTES = 32 * 1024;

/** KIP-390's default compression.lz4.level. */
export const LZ4_DEFAULT_LEVEL = 9;

/**
 * Compresses at the codec's default level, or at `level` (KIP-390's
 * compression.gzip.level / compression.lz4.level / compression.zstd.level; -1 is gzip's
 * default). snappy has no levels. lz4 at the default level 9, or without a level, is
 * lz4-napi's fast encoder, as Kafka's is lz4-java's fast compressor there; at any other
 * level it is lz4-hc.ts, since no
 * npm package writes LZ4 frames at KIP-390's levels on Node 20: lz4-napi and lz4-wasm
 * have no levels, lz4js only the fast mode, `lz4` (node-lz4, a node-gyp build) passes
 * its HC level from an argument it never receives (always 9), and lz4-asm's wasm build
 * does not load on Node 20 while its asm.js build installs process-wide exception
 * handlers.
 */
export function compress(codec: CompressionCodec, data: Buffer, level?: number): Buffer {
  switch (codec) {
    case 0:
      return data;
    case 1:
      return level === undefined || level === -1 ? gzipSync(data) : gzipSync(data, { level });
    case 2:
      return xerialCompress(data);
    case 3:
      // Kafka's Lz4BlockOutputStream uses lz4-java's fast compressor at the default
      // level 9 and the high one at any other: so does this.
      return level === undefined || level === LZ4_DEFAULT_LEVEL
        ? compressFrameSync(data)
        : lz4FrameAtLevel(data, level);
    case 4:
      return level === undefined
        ? zstdCompress(data)
        : zstdCompress(data, { compressionLevel: level });
  }
}

export function decompress(codec: number, data: Buffer): Buffer {
  try {
    switch (codec) {
      case 0:
        return data;
      case 1:
        return gunzipSync(data);
      case 2:
        return isXerial(data) ? xerialDecompress(data) : toBuffer(snappyUncompress(data));
      case 3:
        return decompressFrameSync(data);
      case 4:
        return zstdDecompress(data);
    }
  } catch (e) {
    if (e instanceof CompressionError) throw e;
    throw new CompressionError(codec, `${codecNames[codec as CompressionCodec]}: ${String(e)}`);
  }
  throw new CompressionError(codec, `unknown compression codec ${codec}`);
}

function toBuffer(out: string | Buffer): Buffer {
  return typeof out === 'string' ? Buffer.from(out) : out;
}

function isXerial(data: Buffer): boolean {
  return data.length >= XERIAL_HEADER_BYTES && data.subarray(0, 8).equals(XERIAL_MAGIC);
}

function xerialCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_BYTES);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  for (let pos = 0; pos < data.length; pos += XERIAL_BLOCK_BYTES) {
    const block = snappyCompress(data.subarray(pos, pos + XERIAL_BLOCK_BYTES));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

function xerialDecompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = XERIAL_HEADER_BYTES;
  while (pos < data.length) {
    if (pos + 4 > data.length)
      throw new CompressionError(2, 'snappy: truncated xerial chunk length');
    const len = data.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > data.length) {
      throw new CompressionError(2, `snappy: xerial chunk of ${len} bytes overruns the payload`);
    }
    parts.push(toBuffer(snappyUncompress(data.subarray(pos, pos + len))));
    pos += len;
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}
