import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../../src/protocol/compression.ts';
import { crc32c } from '../../../src/protocol/crc32c.ts';
import {
  ATTR_LOG_APPEND_TIME,
  batchBaseOffset,
  CorruptRecordError,
  checkBatch,
  decodeRecords,
  encodeBatch,
  iterateBatches,
  type RecordInput,
  readBatchHeader,
  setBaseOffset,
  stampLogAppendTime,
} from '../../../src/protocol/record-batch.ts';

const bytesOrNull = fc.option(
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  { nil: null },
);
const recordArb: fc.Arbitrary<RecordInput> = fc.record({
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
  key: bytesOrNull,
  value: bytesOrNull,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 20 }), value: bytesOrNull }), {
    maxLength: 3,
  }),
});

function sample(count = 3, codec: CompressionCodec = CompressionCodec.none): Buffer {
  return encodeBatch({
    baseOffset: 0,
    codec,
    records: Array.from({ length: count }, (_, i) => ({
      timestamp: 1_700_000_000_000 + i,
      key: Buffer.from(`k${i}`),
      value: Buffer.from(`value ${i}`),
    })),
  });
}

describe('record batch v2', () => {
  for (const codec of [0, 1, 2, 3, 4] as CompressionCodec[]) {
    it(`records decode to what was encoded, with codec ${codec}`, () => {
      fc.assert(
        fc.property(
          fc.array(recordArb, { minLength: 1, maxLength: 20 }),
          fc.integer({ min: 0, max: 2 ** 50 }),
          (records, baseOffset) => {
            const batch = encodeBatch({ baseOffset, records, codec });
            expect(checkBatch(batch, 0, batch.length)).toBe(batch.length);
            const decoded = decodeRecords(batch, 0);
            expect(decoded.map((r) => r.offset)).toEqual(records.map((_, i) => baseOffset + i));
            expect(decoded.map((r) => [r.timestamp, r.key, r.value, r.headers])).toEqual(
              records.map((r) => [r.timestamp, r.key, r.value, r.headers]),
            );
            expect(readBatchHeader(batch, 0).codec).toBe(codec);
          },
        ),
        { numRuns: 30 },
      );
    });
  }

  it('the CRC covers attributes to the end, as CRC-32C', () => {
    const batch = sample();
    expect(batch.readUInt32BE(17)).toBe(crc32c(batch.subarray(21)));
  });

  it('assigning the base offset in place keeps the CRC valid', () => {
    const batch = sample();
    setBaseOffset(batch, 0, 123_456_789_012);
    expect(checkBatch(batch, 0, batch.length)).toBe(batch.length);
    expect(batchBaseOffset(batch, 0)).toBe(123_456_789_012);
    expect(decodeRecords(batch, 0)[2].offset).toBe(123_456_789_014);
  });

  it('LogAppendTime stamping sets bit 3 and maxTimestamp, re-CRCs, and records report that time', () => {
    const batch = sample(3, CompressionCodec.lz4);
    stampLogAppendTime(batch, 0, 42_000);
    expect(checkBatch(batch, 0, batch.length)).toBe(batch.length);
    const header = readBatchHeader(batch, 0);
    expect(header.attributes & ATTR_LOG_APPEND_TIME).toBe(ATTR_LOG_APPEND_TIME);
    expect(header.maxTimestamp).toBe(42_000);
    expect(decodeRecords(batch, 0).map((r) => r.timestamp)).toEqual([42_000, 42_000, 42_000]);
  });

  it('a flipped byte anywhere inside the CRC range is a crc-mismatch', () => {
    const batch = sample();
    fc.assert(
      fc.property(fc.integer({ min: 21, max: batch.length - 1 }), (at) => {
        const copy = Buffer.from(batch);
        copy[at] ^= 0x5a;
        const result = checkBatch(copy, 0, copy.length);
        expect(result).toBeInstanceOf(CorruptRecordError);
        expect((result as CorruptRecordError).reason).toBe('crc-mismatch');
      }),
    );
  });

  it('a batch cut short is truncated, a bad magic is invalid-magic', () => {
    const batch = sample();
    expect((checkBatch(batch, 0, batch.length - 1) as CorruptRecordError).reason).toBe('truncated');
    const copy = Buffer.from(batch);
    copy[16] = 1;
    expect((checkBatch(copy, 0, copy.length) as CorruptRecordError).reason).toBe('invalid-magic');
  });

  it('iterates the batches of a byte range in order', () => {
    const a = sample(2);
    const b = sample(5, CompressionCodec.zstd);
    const both = Buffer.concat([a, b]);
    expect([...iterateBatches(both, 0, both.length, true)]).toEqual([
      { position: 0, size: a.length },
      { position: a.length, size: b.length },
    ]);
  });

  it('a record whose length disagrees with its fields is invalid-records', () => {
    const batch = sample(1);
    batch[61] = 0x7e; // first record's length varint
    // Re-CRC so only the record framing is wrong.
    batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
    expect(() => decodeRecords(batch, 0)).toThrow(CorruptRecordError);
  });

  it('keeps the original offset range and a delete horizon when the cleaner rewrites', () => {
    const batch = encodeBatch({
      baseOffset: 100,
      lastOffsetDelta: 9,
      deleteHorizon: 5_000,
      records: [{ offsetDelta: 4, timestamp: 1_000, key: Buffer.from('k'), value: null }],
    });
    const header = readBatchHeader(batch, 0);
    expect(header.hasDeleteHorizon).toBe(true);
    expect(header.baseTimestamp).toBe(5_000);
    expect(header.lastOffsetDelta).toBe(9);
    expect(decodeRecords(batch, 0)).toEqual([
      { offset: 104, timestamp: 1_000, key: Buffer.from('k'), value: null, headers: [] },
    ]);
  });
});
