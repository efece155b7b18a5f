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
import { xxh32Short } from '../../../src/protocol/lz4-hc.ts';

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

  it('lz4 at a level (the broker re-encoding) writes frames lz4-napi decodes, for any bytes and level', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 150_000 }),
          // Runs of few symbols: long matches, literal and match lengths past 15 + 255.
          fc
            .array(fc.constantFrom(97, 98, 99), { maxLength: 150_000 })
            .map((a) => Uint8Array.from(a)),
        ),
        fc.integer({ min: 1, max: 17 }),
        (bytes, level) => {
          const data = Buffer.from(bytes);
          expect(
            decompress(CompressionCodec.lz4, compress(CompressionCodec.lz4, data, level)).equals(
              data,
            ),
          ).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('lz4 frame descriptor checksum is XXH32 as the reference lz4 tool writes it', () => {
    // The two frames of the reference-tool test above: FLG BD (HC a7), FLG BD size (HC b4).
    const independent = Buffer.from('04224d186440a7', 'hex');
    const linked = Buffer.from('04224d186c402b00000000000000b4', 'hex');
    expect((xxh32Short(independent, 4, 2) >>> 8) & 0xff).toBe(0xa7);
    expect((xxh32Short(linked, 4, 10) >>> 8) & 0xff).toBe(0xb4);
  });

  it('lz4 levels search deeper: level 12 writes less than level 1 for structured text', () => {
    const text = Buffer.from(
      Array.from(
        { length: 5000 },
        (_, i) => `{"id":${i},"name":"user ${i % 97}","v":${(i * 7) % 13}}`,
      ).join('\n'),
    );
    const fast = compress(CompressionCodec.lz4, text, 1);
    const best = compress(CompressionCodec.lz4, text, 12);
    expect(best.length).toBeLessThan(fast.length);
    expect(() => compress(CompressionCodec.lz4, text, 18)).toThrow(/lz4 level 18/);
  });

  it("lz4 at the default level 9 is the fast encoder, as Kafka's Lz4BlockOutputStream has it", () => {
    const text = Buffer.from(
      Array.from({ length: 2000 }, (_, i) => `{"id":${i},"name":"user ${i % 97}"}`).join('\n'),
    );
    const fast = compress(CompressionCodec.lz4, text);
    expect(compress(CompressionCodec.lz4, text, 9).equals(fast)).toBe(true);
    expect(compress(CompressionCodec.lz4, text, 8).equals(fast)).toBe(false);
    expect(decompress(CompressionCodec.lz4, compress(CompressionCodec.lz4, text, 8))).toEqual(text);
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
