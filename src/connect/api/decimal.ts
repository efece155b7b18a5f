/**
 * Decimal values as schema.ts carries them: the unscaled integer as minimal
 * two's-complement big-endian bytes, the scale in the schema's `parameters.scale`
 * (Kafka Connect's org.apache.kafka.connect.data.Decimal, also Parquet's DECIMAL
 * over BYTE_ARRAY). These helpers convert between that and bigint or text exactly.
 */
import { DataException } from './errors.ts';
import type { Schema } from './schema.ts';
import { LogicalType } from './schema.ts';

/** The scale of a Decimal schema; throws if the schema is not one. */
export function decimalScale(schema: Schema): number {
  const raw = schema.name === LogicalType.Decimal ? schema.parameters?.scale : undefined;
  const scale = raw === undefined ? Number.NaN : Number(raw);
  if (!Number.isInteger(scale)) {
    throw new DataException(`Schema ${schema.name ?? schema.type} is not a Decimal with a scale`);
  }
  return scale;
}

/** Unscaled integer from two's-complement big-endian bytes (empty = 0). */
export function unscaledFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  if (bytes[0] & 0x80) n -= 1n << BigInt(bytes.length * 8);
  return n;
}

/** Minimal two's-complement big-endian bytes of an integer (as Java's BigInteger). */
export function unscaledToBytes(n: bigint): Uint8Array {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const byte = Number(v & 0xffn);
    out.push(byte);
    v >>= 8n;
    // Done when the remaining bits are pure sign extension of the byte just written.
    if ((v === 0n && (byte & 0x80) === 0) || (v === -1n && (byte & 0x80) !== 0)) break;
  }
  return Uint8Array.from(out.reverse());
}

/** Plain decimal text, e.g. unscaled -1234 with scale 2 -> "-12.34" (no exponent). */
export function decimalToString(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  let digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return (negative ? '-' : '') + digits + '0'.repeat(-scale);
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
  const point = digits.length - scale;
  return `${negative ? '-' : ''}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Unscaled integer of decimal text at a given scale. Text with more fraction digits
 * than the scale is refused unless the extra digits are zeros: silently rounding money
 * is worse than failing the record.
 */
export function decimalFromString(text: string, scale: number): bigint {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text.trim());
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) {
    throw new DataException(`Invalid decimal ${JSON.stringify(text)}`);
  }
  const exponent = m[4] === undefined ? 0 : Number(m[4]);
  const frac = m[3] ?? '';
  // Move the decimal point by the exponent, then pad or trim to the scale.
  let digits = m[2] + frac;
  let fracLen = frac.length - exponent;
  if (fracLen < 0) {
    digits += '0'.repeat(-fracLen);
    fracLen = 0;
  }
  if (fracLen > scale) {
    const cut = fracLen - scale;
    if (/[^0]/.test(digits.slice(digits.length - cut))) {
      throw new DataException(`Decimal ${text} has more than ${scale} fraction digits`);
    }
    digits = digits.slice(0, digits.length - cut);
  } else {
    digits += '0'.repeat(scale - fracLen);
  }
  const n = BigInt(digits === '' ? '0' : digits);
  return m[1] === '-' ? -n : n;
}

/** Decimal bytes from text at the schema's scale, ready to use as a value. */
export function decimalBytes(text: string, scale: number): Uint8Array {
  return unscaledToBytes(decimalFromString(text, scale));
}
