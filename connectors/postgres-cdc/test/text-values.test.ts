import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bigIntBytes,
  decimalBytes,
  isNumericSpecial,
  safeIntegerBytes,
  unscaled,
} from '../src/text-values.ts';

describe('decimal bytes', () => {
  it('writes a safe integer as the minimal two-complement bytes BigInt gives (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -70_000, max: 70_000 }),
          fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
          fc.constantFrom(127, 128, -128, -129, 255, 256, -256, -257, 2 ** 31, -(2 ** 31)),
        ),
        (n) => {
          expect(safeIntegerBytes(n)).toEqual(bigIntBytes(BigInt(n)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('gives the same unscaled bytes for short and long decimals (property)', () => {
    const digits = (max: number) =>
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: max });
    fc.assert(
      fc.property(
        fc.boolean(),
        digits(25),
        fc.option(digits(12)),
        fc.integer({ min: 0, max: 12 }),
        (negative, int, frac, scale) => {
          const text = `${negative ? '-' : ''}${int.join('')}${frac ? `.${frac.join('')}` : ''}`;
          expect(decimalBytes(text, scale)).toEqual(bigIntBytes(unscaled(text, scale)));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('numeric special values', () => {
  it("tells NaN, Infinity and -Infinity from every finite numeric's text (property)", () => {
    expect(['NaN', 'Infinity', '-Infinity'].map(isNumericSpecial)).toEqual([true, true, true]);
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.stringMatching(/^(0|[1-9][0-9]{0,30})$/),
        fc.option(fc.stringMatching(/^[0-9]{1,20}$/)),
        (negative, int, frac) => {
          const text = `${negative ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}`;
          expect(isNumericSpecial(text)).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
