/**
 * Parsers of Postgres' text output, the format pgoutput (and COPY) sends column values
 * in. They rely on the session settings the connector forces on every connection it
 * opens (SESSION_OPTIONS): ISO dates, UTC time zone, ISO 8601 intervals, hex bytea and
 * shortest-exact floats, so each parser handles one shape. Dates, times, timestamps and
 * intervals have their own module, temporal-text.ts. Hot path: these run once per
 * column per event; they avoid regexes where a fixed layout allows slicing.
 */

/** libpq `options` for every connection the connector opens (replication or not). */
export const SESSION_OPTIONS =
  '-c DateStyle=ISO,YMD -c TimeZone=UTC -c IntervalStyle=iso_8601 -c bytea_output=hex -c extra_float_digits=1';

/** bytea in hex output ('\\x0a0b'). */
export function parseByteaHex(text: string): Buffer {
  return Buffer.from(text.slice(2), 'hex');
}

/**
 * Elements of a one- or multi-dimensional array literal ('{1,2,NULL}', '{"a b","c\\"d"}',
 * '{{1,2},{3,4}}'), nested arrays for nested braces, null for NULL. `delimiter` is the
 * element type's typdelim: ',' for all but box, whose arrays read '{(1,1),(0,0);(2,2),(1,1)}'.
 */
export function parseArrayLiteral(text: string, delimiter = ','): unknown[] {
  let pos = 0;
  // A leading dimension decoration ('[0:1]={...}') only appears for non-default bounds.
  if (text[0] === '[') pos = text.indexOf('=') + 1;
  const parse = (): unknown[] => {
    const out: unknown[] = [];
    pos++; // {
    if (text[pos] === '}') {
      pos++;
      return out;
    }
    for (;;) {
      const c = text[pos];
      if (c === '{') out.push(parse());
      else if (c === '"') {
        let s = '';
        pos++;
        while (text[pos] !== '"') {
          if (text[pos] === '\\') pos++;
          s += text[pos++];
        }
        pos++;
        out.push(s);
      } else {
        let end = pos;
        while (text[end] !== delimiter && text[end] !== '}') end++;
        const raw = text.slice(pos, end);
        out.push(raw === 'NULL' ? null : raw);
        pos = end;
      }
      if (text[pos] === delimiter) pos++;
      else {
        pos++; // }
        return out;
      }
    }
  };
  return parse();
}

/**
 * Unscaled two's-complement big-endian bytes of a decimal text at a fixed scale
 * (Kafka Connect's Decimal): '12.3' at scale 2 is 1230 -> 0x04CE.
 */
export function decimalBytes(text: string, scale: number): Buffer {
  const n = unscaledNumber(text, scale);
  return n === null ? bigIntBytes(unscaled(text, scale)) : safeIntegerBytes(n);
}

/**
 * The unscaled value of a decimal text when it has at most 15 digits, so a double
 * holds it exactly; null otherwise (and for anything but digits, a sign and a point).
 * Most decimals take this path, which skips the BigInt and hex round trip.
 */
function unscaledNumber(text: string, scale: number): number | null {
  const negative = text.charCodeAt(0) === 45; /* - */
  let n = 0;
  let digits = 0;
  let fracDigits = -1; // -1 until the point
  for (let i = negative ? 1 : 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */ && fracDigits < 0) {
      fracDigits = 0;
      continue;
    }
    if (c < 48 || c > 57) return null;
    if (fracDigits >= 0) {
      if (fracDigits === scale) continue; // digits beyond the scale are cut, as unscaled() does
      fracDigits++;
    }
    n = n * 10 + (c - 48);
    if (++digits > 15) return null;
  }
  for (let f = Math.max(fracDigits, 0); f < scale; f++) {
    n *= 10;
    if (++digits > 15) return null;
  }
  return negative ? -n : n;
}

/** bigIntBytes for a safe integer, without BigInt. */
export function safeIntegerBytes(n: number): Buffer {
  // A negative n is written as the bitwise complement of -n - 1, byte by byte, which
  // keeps every intermediate value exact.
  const negative = n < 0;
  let v = negative ? -n - 1 : n;
  let length = 1;
  for (let limit = 128; v >= limit; limit *= 256) length++;
  const out = Buffer.allocUnsafe(length);
  for (let i = length - 1; i >= 0; i--) {
    const b = v % 256;
    out[i] = negative ? 255 - b : b;
    v = Math.floor(v / 256);
  }
  return out;
}

export function unscaled(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const intPart = dot < 0 ? body : body.slice(0, dot);
  let frac = dot < 0 ? '' : body.slice(dot + 1);
  if (frac.length > scale) frac = frac.slice(0, scale);
  else frac = frac.padEnd(scale, '0');
  const digits = `${intPart}${frac}`;
  const n = BigInt(digits === '' ? '0' : digits);
  return negative ? -n : n;
}

/** Minimal two's-complement big-endian encoding, as Java's BigInteger.toByteArray(). */
export function bigIntBytes(value: bigint): Buffer {
  if (value >= -128n && value <= 127n) return Buffer.from([Number(value) & 0xff]);
  let hex = (value < 0n ? -value : value).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (value > 0n) {
    if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return bytes;
  }
  // Negative: two's complement of the magnitude, with a sign byte when needed.
  let carry = 1;
  for (let i = bytes.length - 1; i >= 0; i--) {
    const v = (~bytes[i] & 0xff) + carry;
    bytes[i] = v & 0xff;
    carry = v >> 8;
  }
  if (!(bytes[0] & 0x80)) bytes = Buffer.concat([Buffer.from([0xff]), bytes]);
  return bytes;
}

/**
 * True for numeric's special values: 'NaN' (every version) and 'Infinity' / '-Infinity'
 * (Postgres 14+, unconstrained numeric only: numeric(p,s) rejects them). numeric_out
 * never writes an exponent, so a finite value's text ends in a digit and one character
 * tells the two apart; this runs on every numeric value.
 */
export function isNumericSpecial(text: string): boolean {
  return text.charCodeAt(text.length - 1) > 57; /* past '9': the 'N' of NaN, the 'y' of Infinity */
}

/**
 * A finite numeric's text as Java's BigDecimal.toString() writes the same value at the
 * same scale: what Debezium sends in decimal.handling.mode=string. Debezium parses the
 * text with new BigDecimal(text) (pgoutput; the snapshot's getBigDecimal keeps the scale
 * too), sets numeric(p,s) to scale s, which numeric_out already wrote, and
 * SpecialValueDecimal.fromLogical returns toString(), not toPlainString().
 *
 * toString() is plain, which is numeric_out's own text, unless the scale is negative
 * (never here: numeric_out writes no exponent) or the adjusted exponent, the power of ten
 * of the first significant digit (zero's is -scale), is below -6. Then it writes the
 * unscaled digits as d.ddd, 'E' and that exponent, keeping trailing zeros:
 *   '0.00000012' -> '1.2E-7', '-0.000000100' -> '-1.00E-7', '0.0000000' -> '0E-7'
 *   '0.0000012' and '0.000000' stay as they are.
 * Only text starting '0.' (or '-0.') can have such an exponent, so every other value costs
 * two character checks on this per-value path.
 */
export function bigDecimalToString(text: string): string {
  const sign = text.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  const point = sign + 1;
  if (text.charCodeAt(sign) !== 48 /* 0 */ || text.charCodeAt(point) !== 46 /* . */) return text;
  let first = point + 1;
  while (first < text.length && text.charCodeAt(first) === 48) first++;
  if (first === text.length) {
    // Zero. numeric_out never writes '-0', but BigDecimal has no negative zero either.
    const scale = text.length - point - 1;
    return scale > 6 ? `0E-${scale}` : text.slice(sign);
  }
  const adjusted = point - first;
  if (adjusted >= -6) return text;
  const fraction = first + 1 < text.length ? `.${text.slice(first + 1)}` : '';
  return `${sign ? '-' : ''}${text[first]}${fraction}E${adjusted}`;
}

/** Number of digits after the point in a decimal text (VariableScaleDecimal's scale). */
export function scaleOf(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}
