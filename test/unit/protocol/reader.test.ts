import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Reader } from '../../../src/protocol/reader.ts';
import { Writer } from '../../../src/protocol/writer.ts';

describe('Reader', () => {
  it('has a sticky error: after the first short read every read returns a zero value', () => {
    const r = new Reader(Buffer.from([0, 1, 0]));
    expect(r.int16()).toBe(1);
    expect(r.int32()).toBe(0);
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/short read/);
    expect([r.int8(), r.int64(), r.bool(), r.string(), r.nullableBytes(), r.uuid()]).toEqual([
      0,
      0n,
      false,
      '',
      Buffer.alloc(0),
      '00000000-0000-0000-0000-000000000000',
    ]);
    expect(r.failure).toMatch(/need 4 bytes/);
  });

  it('rejects negative lengths other than the null marker', () => {
    const negString = new Reader(Buffer.from([0xff, 0xfe, 0x61, 0x62]));
    expect(negString.nullableString()).toBeNull();
    expect(negString.ok).toBe(false);
    const negBytes = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xfb]));
    negBytes.nullableBytes();
    expect(negBytes.ok).toBe(false);
    const nullNonNullable = new Reader(Buffer.from([0xff, 0xff]));
    nullNonNullable.string();
    expect(nullNonNullable.ok).toBe(false);
    const negArray = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xfd]));
    negArray.arrayLength(false, 4);
    expect(negArray.ok).toBe(false);
  });

  it('refuses an array count larger than the remaining bytes allow, without allocating', () => {
    const r = new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1]));
    expect(r.arrayLength(false, 4)).toBe(0);
    expect(r.failure).toMatch(/exceeds remaining/);
    const compact = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(compact.arrayLength(true, 1)).toBe(0);
    expect(compact.ok).toBe(false);
  });

  it('refuses a bytes length larger than the frame', () => {
    const r = new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2]));
    expect(r.bytes().length).toBe(0);
    expect(r.ok).toBe(false);
  });

  it('refuses an unsigned varint longer than 5 bytes or above 32 bits', () => {
    const tooLong = new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]));
    tooLong.uvarint();
    expect(tooLong.ok).toBe(false);
    const tooBig = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f]));
    tooBig.uvarint();
    expect(tooBig.ok).toBe(false);
    const max = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(max.uvarint()).toBe(0xffffffff);
    expect(max.ok).toBe(true);
  });

  it('returns bytes as views into the frame, not copies', () => {
    const frame = Buffer.from([0, 0, 0, 2, 7, 8]);
    const b = new Reader(frame).bytes();
    expect(b.buffer).toBe(frame.buffer);
    expect(b.byteOffset).toBe(frame.byteOffset + 4);
  });

  it('round-trips varints, varlongs and unsigned varints with the Writer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (i, l, u) => {
          const w = new Writer(1);
          w.varint(i);
          w.varlong(l);
          w.uvarint(u);
          const r = new Reader(w.finish());
          expect([r.varint(), r.varlong(), r.uvarint(), r.remaining, r.ok]).toEqual([
            i,
            l,
            u,
            0,
            true,
          ]);
        },
      ),
    );
  });

  it('encodes zigzag varints as Kafka does (0->0, -1->1, 1->2, -64->127, 64->128 as two bytes)', () => {
    const w = new Writer();
    for (const v of [0, -1, 1, -64, 64]) w.varint(v);
    expect(w.finish()).toEqual(Buffer.from([0x00, 0x01, 0x02, 0x7f, 0x80, 0x01]));
  });
});

describe('Writer', () => {
  it('passes large raw runs through as their own chunk and still concatenates correctly', () => {
    const big = Buffer.alloc(20000, 7);
    const w = new Writer(8);
    const at = w.reserveInt32();
    w.int16(1);
    w.bytes(big);
    w.int16(2);
    w.patchInt32(at, w.length - 4);
    const chunks = w.chunks();
    expect(chunks).toContain(big);
    const all = w.finish();
    expect(all.length).toBe(4 + 2 + 4 + 20000 + 2);
    expect(all.readInt32BE(0)).toBe(all.length - 4);
    expect(Buffer.concat(chunks)).toEqual(all);
    expect(all.readInt16BE(all.length - 2)).toBe(2);
  });
});
