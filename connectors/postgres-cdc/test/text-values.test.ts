import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBigDecimal } from '../../../src/connect/converters/java-number-format.ts';
import {
  bigDecimalToString,
  bigIntBytes,
  decimalBytes,
  isNumericSpecial,
  safeIntegerBytes,
  scaleOf,
  unscaled,
} from '../src/text-values.ts';

describe('decimal bytes', () => {
  /**
   * Java's BigInteger.toByteArray() for each value (the bytes Kafka Connect's Decimal
   * logical type holds): minimal two's complement, big-endian. Written out here, not
   * computed, so the properties below compare against a checked oracle.
   */
  const JAVA_BYTES: Array<[bigint, string]> = [
    [0n, '00'],
    [1n, '01'],
    [-1n, 'ff'],
    [15n, '0f'],
    [-20n, 'ec'],
    [-50n, 'ce'],
    [127n, '7f'],
    [128n, '0080'],
    [-128n, '80'],
    [-129n, 'ff7f'],
    [255n, '00ff'],
    [256n, '0100'],
    [123456n, '01e240'],
    [2_500_000n, '2625a0'],
    [15_000_000n, '00e4e1c0'],
    [-1234567890n, 'b669fd2e'],
    [2n ** 63n - 1n, '7fffffffffffffff'],
    [-(2n ** 63n), '8000000000000000'],
    [2n ** 64n, '010000000000000000'],
  ];

  it("writes Java's BigInteger.toByteArray bytes (literal vectors)", () => {
    for (const [value, hex] of JAVA_BYTES) {
      expect(bigIntBytes(value).toString('hex'), String(value)).toBe(hex);
      if (Number.isSafeInteger(Number(value)) && BigInt(Number(value)) === value) {
        expect(safeIntegerBytes(Number(value)).toString('hex'), String(value)).toBe(hex);
      }
    }
    expect(decimalBytes('-0.50', 2).toString('hex')).toBe('ce');
    expect(decimalBytes('1234.56', 2).toString('hex')).toBe('01e240');
    expect(decimalBytes('-12345678.90', 2).toString('hex')).toBe('b669fd2e');
    expect(decimalBytes('18446744073709551616', 0).toString('hex')).toBe('010000000000000000');
  });

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

describe("numeric text as Java's BigDecimal.toString()", () => {
  // Left: numeric_out's text (what pgoutput and COPY send). Right: new BigDecimal(left)
  // .toString(), printed by OpenJDK 17.
  it.each([
    // Zero keeps its scale: plain up to scale 6, then an exponent of -scale.
    ['0', '0'],
    ['0.00', '0.00'],
    ['0.000000', '0.000000'],
    ['0.0000000', '0E-7'],
    ['0.00000000000000000000', '0E-20'],
    // Below 1e-6 (adjusted exponent under -6): d.ddd E-n, trailing zeros kept.
    ['0.0000001', '1E-7'],
    ['-0.0000001', '-1E-7'],
    ['0.00000012', '1.2E-7'],
    ['0.000000120', '1.20E-7'],
    ['0.0000001000', '1.000E-7'],
    ['0.00000012345', '1.2345E-7'],
    ['0.0000009', '9E-7'],
    ['0.00000099', '9.9E-7'],
    ['0.000000000000000000000000000001', '1E-30'],
    ['-0.000000000000000000000000000001230', '-1.230E-30'],
    // From 1e-6 up: plain, exactly numeric_out's text.
    ['0.000001', '0.000001'],
    ['0.0000010', '0.0000010'],
    ['0.0000012345', '0.0000012345'],
    ['-0.000100', '-0.000100'],
    ['0.5', '0.5'],
    ['1.10', '1.10'],
    ['22.2200', '22.2200'],
    ['-12345678.90', '-12345678.90'],
    ['-20', '-20'],
    ['100000000000000000000000000000000000000', '100000000000000000000000000000000000000'],
    ['123456789012345678901234567890.123456789', '123456789012345678901234567890.123456789'],
  ])('writes %s as %s', (text, java) => {
    expect(bigDecimalToString(text)).toBe(java);
  });

  it('agrees with the unscaled-value-and-scale formatter for any numeric_out text (property)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.stringMatching(/^(0|[1-9][0-9]{0,30})$/),
        fc.option(fc.tuple(fc.nat({ max: 40 }), fc.stringMatching(/^[0-9]{0,20}$/))),
        (negative, int, frac) => {
          const digits = frac === null ? '' : `${'0'.repeat(frac[0])}${frac[1]}`;
          const body = frac === null || digits === '' ? int : `${int}.${digits}`;
          // numeric_out never writes a negative zero.
          const text = negative && /[1-9]/.test(body) ? `-${body}` : body;
          const scale = scaleOf(text);
          expect(bigDecimalToString(text)).toBe(formatBigDecimal(unscaled(text, scale), scale));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
