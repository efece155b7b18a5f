import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN, int64, int64FromDouble, int64FromText } from '../src/int64.ts';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

describe('int64 values', () => {
  it('are numbers exactly when safe and bigints otherwise, from a bigint or a text (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
          fc.bigInt({ min: -SAFE - 3n, max: -SAFE + 3n }),
          fc.bigInt({ min: SAFE - 3n, max: SAFE + 3n }),
        ),
        (v) => {
          const expected = v >= -SAFE && v <= SAFE ? Number(v) : v;
          expect(int64(v)).toBe(expected);
          expect(int64FromText(String(v))).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("follow Java's (long) cast of a double: truncated, exact, saturated at the ends", () => {
    expect(int64FromDouble(-2.9)).toBe(-2);
    expect(int64FromDouble(2 ** 60 + 2 ** 10)).toBe(2n ** 60n + 2n ** 10n);
    expect(int64FromDouble(2 ** 63)).toBe(INT64_MAX);
    expect(int64FromDouble(-(2 ** 63))).toBe(INT64_MIN);
    expect(int64FromDouble(Number.POSITIVE_INFINITY)).toBe(INT64_MAX);
    expect(int64FromDouble(-1e300)).toBe(INT64_MIN);
  });
});
