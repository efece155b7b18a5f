/**
 * Connect int64 values as src/connect/api/schema.ts carries them: a number when the
 * value is a safe integer (|v| <= 2^53 - 1), else a bigint. The representation is a
 * function of the value alone, so the same value read by the snapshot and by the
 * stream compares equal, and the common case never allocates a BigInt.
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT64_MIN = -(2n ** 63n);

/** An exact integer as a number when it is safe, else as the bigint itself. */
export function int64(value: bigint): number | bigint {
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value;
}

/** The int64 of an integer's decimal text ('9223372036854775807'), exactly. */
export function int64FromText(text: string): number | bigint {
  const n = +text;
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/**
 * The int64 a double becomes under Java's `(long)` cast: the fraction cut, values
 * beyond int64 saturated to its ends. For values Debezium computes in doubles
 * (MicroDuration), so the bits match whatever their size.
 */
export function int64FromDouble(value: number): number | bigint {
  const n = Math.trunc(value);
  if (Number.isSafeInteger(n)) return n;
  if (n >= 2 ** 63) return INT64_MAX;
  if (n <= -(2 ** 63)) return INT64_MIN;
  // Beyond 2^53 every double is an integer, so BigInt takes it exactly.
  return BigInt(n);
}
