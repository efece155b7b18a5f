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

/**
 * Days since 1970-01-01 of a proleptic Gregorian date, year 0 being 1 BC (as Date
 * counts). Plain arithmetic (days-from-civil): a Date object per value cost more than
 * the rest of a row's mapping.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const monthFromMarch = month > 2 ? month - 3 : month + 9;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Two ASCII digits at `at` as a number. */
function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + (text.charCodeAt(at + 1) - 48);
}

/** Four ASCII digits at `at` as a number. */
function fourDigits(text: string, at: number): number {
  return twoDigits(text, at) * 100 + twoDigits(text, at + 2);
}

/** Days since 1970-01-01 of an ISO date 'YYYY-MM-DD' (with ' BC' for years before 1). */
export function parseDateDays(text: string): number {
  // The common shape: a four-digit year AD.
  if (text.length === 10 && text.charCodeAt(4) === 45 /* - */)
    return daysFromCivil(fourDigits(text, 0), twoDigits(text, 5), twoDigits(text, 8));
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
  const sign = text.charCodeAt(at) === 45 /* - */ ? -1 : 1;
  let seconds = 0;
  let unit = 3600;
  let value = 0;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 58 /* : */) {
      seconds += value * unit;
      unit /= 60;
      value = 0;
    } else value = value * 10 + (c - 48);
  }
  return sign * (seconds + value * unit);
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
  // The common shape, 'YYYY-MM-DD HH:MM:SS...' with a four-digit year AD, by position.
  if (
    text.length >= 19 &&
    text.charCodeAt(4) === 45 /* - */ &&
    text.charCodeAt(10) === 32 /* space */ &&
    text.charCodeAt(text.length - 1) !== 67 /* C of BC */
  ) {
    const days = daysFromCivil(fourDigits(text, 0), twoDigits(text, 5), twoDigits(text, 8));
    const off = offsetIndex(text, 18);
    const timeEnd = off < 0 ? text.length : off;
    let micros =
      ((twoDigits(text, 11) * 60 + twoDigits(text, 14)) * 60 + twoDigits(text, 17)) * 1_000_000 +
      fractionMicros(text, 19, timeEnd);
    if (off >= 0) micros -= parseOffsetSeconds(text, off) * 1_000_000;
    return days * MICROS_PER_DAY + micros;
  }
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
  const days = Math.floor(epochMicros / MICROS_PER_DAY);
  const { year, month, day } = civilFromDays(days);
  // Date prints years outside 0..9999 in its extended form (+010000, -000001): leave
  // those (and NaN, which it refuses) to it.
  if (!(year >= 0 && year <= 9999)) {
    const iso = new Date(Math.floor(epochMicros / 1000)).toISOString();
    const micros = epochMicros - Math.floor(epochMicros / 1_000_000) * 1_000_000;
    return `${iso.slice(0, 19)}${fraction(micros)}Z`;
  }
  const ofDay = epochMicros - days * MICROS_PER_DAY;
  const seconds = Math.floor(ofDay / 1_000_000);
  const y = year < 1000 ? String(year).padStart(4, '0') : String(year);
  return `${y}-${pad2(month)}-${pad2(day)}T${pad2(Math.floor(seconds / 3600))}:${pad2(
    Math.floor(seconds / 60) % 60,
  )}:${pad2(seconds % 60)}${fraction(ofDay - seconds * 1_000_000)}Z`;
}

/**
 * The same for a timestamptz text. The session's TimeZone is UTC (SESSION_OPTIONS), so
 * Postgres sends 'YYYY-MM-DD HH:MM:SS[.f]+00' with trailing zeros of the fraction
 * dropped, which is already the answer but for two characters.
 */
export function formatZonedTimestampText(text: string): string {
  const n = text.length;
  if (
    n >= 22 &&
    text.charCodeAt(n - 3) === 43 /* + */ &&
    text.charCodeAt(n - 2) === 48 &&
    text.charCodeAt(n - 1) === 48 &&
    text.charCodeAt(4) === 45 /* - */ &&
    text.charCodeAt(10) === 32 /* space */ &&
    (n === 22 || text.charCodeAt(n - 4) !== 48) /* no trailing zero in the fraction */
  ) {
    return `${text.slice(0, 10)}T${text.slice(11, n - 3)}Z`;
  }
  return formatZonedTimestamp(parseTimestampMicros(text));
}

/** Year, month (1-12) and day of days since 1970-01-01 (civil-from-days). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** '.f' of a microsecond count without trailing zeros; '' for none. */
function fraction(micros: number): string {
  if (micros === 0) return '';
  let m = micros;
  let digits = 6;
  while (m % 10 === 0) {
    m /= 10;
    digits--;
  }
  return `.${String(m).padStart(digits, '0')}`;
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
  const fracMicros = Number(frac.padEnd(6, '0').slice(0, 6));
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

/** Number of digits after the point in a decimal text (VariableScaleDecimal's scale). */
export function scaleOf(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}
