import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { compressSync as rawSnappy } from 'snappy';
import { describe, expect, it } from 'vitest';
import {
  CompressionCodec,
  CompressionError,
  compress,
  decompress,
} from '../../../src/protocol/compression.ts';

const codecs = [
  CompressionCodec.none,
  CompressionCodec.gzip,
  CompressionCodec.snappy,
  CompressionCodec.lz4,
  CompressionCodec.zstd,
] as const;

describe('compression codecs', () => {
  for (const codec of codecs) {
    it(`codec ${codec} decompresses what it compressed, for any bytes`, () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 100_000 }), (bytes) => {
          const data = Buffer.from(bytes);
          expect(decompress(codec, compress(codec, data)).equals(data)).toBe(true);
        }),
        { numRuns: 40 },
      );
    });
  }

  it('snappy output uses the xerial framing Java and librdkafka producers write', () => {
    const out = compress(CompressionCodec.snappy, Buffer.alloc(100_000, 7));
    expect(out.subarray(0, 8)).toEqual(Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0]));
    expect(out.readInt32BE(8)).toBe(1);
    expect(out.readInt32BE(12)).toBe(1);
    // 100 000 bytes are split into 32 KiB blocks: 4 chunks follow the header.
    let pos = 16;
    let chunks = 0;
    while (pos < out.length) {
      pos += 4 + out.readInt32BE(pos);
      chunks++;
    }
    expect(chunks).toBe(4);
  });

  it('snappy decompression also accepts raw snappy without framing', () => {
    const data = Buffer.from('raw snappy from an older client '.repeat(50));
    expect(decompress(CompressionCodec.snappy, rawSnappy(data)).equals(data)).toBe(true);
  });

  it('lz4 decompresses frames written by the reference lz4 tool (independent and linked blocks)', () => {
    const text = 'hello kafka lz4 frame hello kafka lz4 frame';
    // `lz4 -c` (independent blocks, content checksum)
    const independent = Buffer.from(
      '04224d186440a720000000fc0768656c6c6f206b61666b61206c7a34206672616d65201600506672616d650000000060635634',
      'hex',
    );
    // `lz4 -BD --content-size -c` (linked blocks, content size in the header)
    const linked = Buffer.from(
      '04224d186c402b00000000000000b420000000fc0768656c6c6f206b61666b61206c7a34206672616d65201600506672616d650000000060635634',
      'hex',
    );
    expect(decompress(CompressionCodec.lz4, independent).toString()).toBe(text);
    expect(decompress(CompressionCodec.lz4, linked).toString()).toBe(text);
  });

  it('gzip decompresses members written by another gzip implementation', () => {
    const data = Buffer.from('gzip from zlib level 9'.repeat(20));
    expect(decompress(CompressionCodec.gzip, gzipSync(data, { level: 9 })).equals(data)).toBe(true);
  });

  it('garbage fails with a CompressionError naming the codec', () => {
    for (const codec of [1, 2, 3, 4]) {
      expect(() => decompress(codec, Buffer.from('definitely not compressed'))).toThrow(
        CompressionError,
      );
    }
  });
});
