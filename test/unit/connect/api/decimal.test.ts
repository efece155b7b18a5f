import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DataException,
  decimalFromString,
  decimalToString,
  unscaledFromBytes,
  unscaledToBytes,
} from '../../../../src/connect/api/index.ts';

describe('decimal helpers', () => {
  it("encode unscaled integers as Java's BigInteger.toByteArray does", () => {
    expect([...unscaledToBytes(156n)]).toEqual([0x00, 0x9c]);
    expect([...unscaledToBytes(-1n)]).toEqual([0xff]);
    expect([...unscaledToBytes(0n)]).toEqual([0x00]);
    expect([...unscaledToBytes(-128n)]).toEqual([0x80]);
    expect([...unscaledToBytes(128n)]).toEqual([0x00, 0x80]);
  });

  it('round-trip any integer through bytes', () => {
    fc.assert(fc.property(fc.bigInt(), (n) => unscaledFromBytes(unscaledToBytes(n)) === n));
  });

  it('convert text at a scale exactly, refusing lost digits', () => {
    expect(decimalFromString('12.3', 2)).toBe(1230n);
    expect(decimalFromString('-0.05', 2)).toBe(-5n);
    expect(decimalFromString('1.5E3', 0)).toBe(1500n);
    expect(decimalFromString('1.2300', 2)).toBe(123n);
    expect(() => decimalFromString('1.234', 2)).toThrow(DataException);
    expect(() => decimalFromString('abc', 2)).toThrow(DataException);
    expect(decimalToString(-1234n, 2)).toBe('-12.34');
    expect(decimalToString(5n, 3)).toBe('0.005');
  });

  it('round-trip text and unscaled values at any scale', () => {
    fc.assert(
      fc.property(
        fc.bigInt(),
        fc.integer({ min: 0, max: 20 }),
        (n, scale) => decimalFromString(decimalToString(n, scale), scale) === n,
      ),
    );
  });
});
