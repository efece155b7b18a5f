/**
 * Parsers of Postgres' text output, the format pgoutput (and a text-mode SELECT)
 * sends column values in. They rely on the session settings the connector forces on
 * every connection it opens (SESSION_OPTIONS): ISO dates, UTC time zone, ISO 8601
 * intervals, hex bytea and shortest-exact floats, so each parser handles one shape.
 * Hot path: these run once per column per event; they avoid regexes where a fixed
 * layout allows slicing.
 */

/** libpq `options` for every connection the connector opens (replication or not). */
export const SESSION_OPTIONS =
  '-c DateStyle=ISO,YMD -c TimeZone=UTC -c IntervalStyle=iso_8601 -c bytea_output=hex -c extra_float_digits=1';

const MICROS_PER_DAY = 86_400_000_000;

/** Digits after a '.', as microseconds (".5" is 500000, ".123456" is 123456). */
function fractionMicros(text: string, start: number, end: number): number {
  if (start >= end || text.charCodeAt(start) !== 46 /* . */) return 0;
  let micros = 0;
  let digits = 0;
  for (let i = start + 1; i < end && digits < 6; i++, digits++)
    micros = micros * 10 + (text.charCodeAt(i) - 48);
  for (; digits < 6; digits++) micros *= 10;
  return micros;
}

/** Days since 1970-01-01 of an ISO date 'YYYY-MM-DD' (with ' BC' for years before 1). */
export function parseDateDays(text: string): number {
  const dash = text.indexOf('-', 1);
  let year = Number(text.slice(0, dash));
  const month = Number(text.slice(dash + 1, dash + 3));
  const day = Number(text.slice(dash + 4, dash + 6));
  if (text.endsWith(' BC')) year = 1 - year;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return Math.floor(d.getTime() / 86_400_000);
}

/** Microseconds of the day of 'HH:MM:SS[.ffffff]' (24:00:00 allowed, as Postgres does). */
export function parseTimeMicros(text: string, end = text.length): number {
  const h = (text.charCodeAt(0) - 48) * 10 + (text.charCodeAt(1) - 48);
  const m = (text.charCodeAt(3) - 48) * 10 + (text.charCodeAt(4) - 48);
  const s = (text.charCodeAt(6) - 48) * 10 + (text.charCodeAt(7) - 48);
  return ((h * 60 + m) * 60 + s) * 1_000_000 + fractionMicros(text, 8, end);
}

/** Offset in seconds of a '+HH[:MM[:SS]]' suffix starting at `at`. */
function parseOffsetSeconds(text: string, at: number): number {
  const sign = text[at] === '-' ? -1 : 1;
  const parts = text.slice(at + 1).split(':');
  return sign * (Number(parts[0]) * 3600 + Number(parts[1] ?? 0) * 60 + Number(parts[2] ?? 0));
}

/** Index of a time zone offset sign in a time or timestamp text, after `from`; -1 if none. */
function offsetIndex(text: string, from: number): number {
  for (let i = text.length - 1; i > from; i--) {
    const c = text.charCodeAt(i);
    if (c === 43 /* + */ || c === 45 /* - */) return i;
  }
  return -1;
}

/**
 * Microseconds since the epoch of 'YYYY-MM-DD HH:MM:SS[.ffffff][+TZ][ BC]'. A zone
 * offset, when present, is applied (timestamptz); without one the value is taken as
 * UTC wall time, as Debezium does for timestamp without time zone.
 */
export function parseTimestampMicros(text: string): number {
  let t = text;
  let bc = false;
  if (t.endsWith(' BC')) {
    bc = true;
    t = t.slice(0, -3);
  }
  const space = t.indexOf(' ', 5);
  const datePart = t.slice(0, space);
  let days = parseDateDays(bc ? `${datePart} BC` : datePart);
  const timeStart = space + 1;
  const off = offsetIndex(t, timeStart + 7);
  const timeEnd = off < 0 ? t.length : off;
  let micros = parseTimeMicros(t.slice(timeStart, timeEnd));
  if (off >= 0) micros -= parseOffsetSeconds(t, off) * 1_000_000;
  if (micros >= MICROS_PER_DAY || micros < 0) {
    const shift = Math.floor(micros / MICROS_PER_DAY);
    days += shift;
    micros -= shift * MICROS_PER_DAY;
  }
  return days * MICROS_PER_DAY + micros;
}

/** Debezium's ZonedTimestamp text: ISO-8601 in UTC, 'Z', fraction without trailing zeros. */
export function formatZonedTimestamp(epochMicros: number): string {
  const millis = Math.floor(epochMicros / 1000);
  const iso = new Date(millis).toISOString(); // 2024-01-02T03:04:05.678Z
  const micros = epochMicros - Math.floor(epochMicros / 1_000_000) * 1_000_000;
  return `${iso.slice(0, 19)}${fraction(micros)}Z`;
}

function fraction(micros: number): string {
  if (micros === 0) return '';
  return `.${String(micros).padStart(6, '0').replace(/0+$/, '')}`;
}

/** Debezium's ZonedTime text for a timetz value: the time in UTC, 'HH:MM:SS[.f]Z'. */
export function formatZonedTime(text: string): string {
  const off = offsetIndex(text, 7);
  let micros = parseTimeMicros(text, off < 0 ? text.length : off);
  if (off >= 0) micros -= parseOffsetSeconds(text, off) * 1_000_000;
  micros = ((micros % MICROS_PER_DAY) + MICROS_PER_DAY) % MICROS_PER_DAY;
  const seconds = Math.floor(micros / 1_000_000);
  const hh = String(Math.floor(seconds / 3600)).padStart(2, '0');
  const mm = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
  const ss = String(seconds % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}${fraction(micros - seconds * 1_000_000)}Z`;
}

const INTERVAL_ISO =
  /^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$/;

/**
 * Debezium's MicroDuration of an ISO-8601 interval ('P1Y2M3DT4H5M6.5S'): approximate
 * microseconds with a month of 365.25 / 12 days, as Debezium computes it.
 */
export function parseIntervalMicros(text: string): number {
  const m = INTERVAL_ISO.exec(text);
  if (!m) throw new Error(`unexpected interval text ${JSON.stringify(text)}`);
  const n = (i: number) => (m[i] === undefined ? 0 : Number(m[i]));
  const months = n(1) * 12 + n(2);
  const days = months * (365.25 / 12) + n(3);
  const seconds = ((days * 24 + n(4)) * 60 + n(5)) * 60;
  // Seconds carry a fraction; add whole microseconds separately to keep them exact.
  const secText = m[6] ?? '0';
  const negative = secText.startsWith('-');
  const [whole, frac = ''] = secText.replace('-', '').split('.');
  const fracMicros = Number((frac + '000000').slice(0, 6));
  const secMicros = (Number(whole) * 1_000_000 + fracMicros) * (negative ? -1 : 1);
  return Math.trunc(seconds * 1_000_000) + secMicros;
}

/** bytea in hex output ('\\x0a0b'). */
export function parseByteaHex(text: string): Buffer {
  return Buffer.from(text.slice(2), 'hex');
}

/**
 * Elements of a one- or multi-dimensional array literal ('{1,2,NULL}', '{"a b","c\\"d"}',
 * '{{1,2},{3,4}}'), nested arrays for nested braces, null for NULL.
 */
export function parseArrayLiteral(text: string): unknown[] {
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
        while (text[end] !== ',' && text[end] !== '}') end++;
        const raw = text.slice(pos, end);
        out.push(raw === 'NULL' ? null : raw);
        pos = end;
      }
      if (text[pos] === ',') pos++;
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
  return bigIntBytes(unscaled(text, scale));
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

/** Number of digits after the point in a decimal text (VariableScaleDecimal's scale). */
export function scaleOf(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}
