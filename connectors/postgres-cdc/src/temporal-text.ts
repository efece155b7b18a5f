/**
 * Postgres' date, time, timestamp and interval text to Debezium's temporal values.
 * The text is what pgoutput and COPY send under the session settings the connector
 * forces (SESSION_OPTIONS in text-values.ts: DateStyle ISO, TimeZone UTC, IntervalStyle
 * iso_8601), so each parser handles one shape. Hot path: these run once per column per
 * event; the common shape (a four-digit year AD) is read by position, without regexes,
 * Date objects or BigInts.
 *
 * Every value Postgres accepts must come through, exactly:
 *   date                 4714-11-24 BC .. 5874897-12-31, 'infinity', '-infinity'
 *   timestamp[tz]        4714-11-24 BC .. 294276-12-31 23:59:59.999999, '[-]infinity'
 *   interval             about ±178,000,000 years, '[-]infinity' (Postgres 17+)
 * Years are proleptic Gregorian with year 0 = 1 BC, as Java's java.time counts them.
 * Date objects are never used for the calendar: they stop at year 275760.
 *
 * Int64 results follow int64.ts (a number when safe, else a bigint). Epoch
 * microseconds pass 2^53 outside years 1685..2254 (and int64 itself after 294247),
 * epoch milliseconds pass 2^53 after year 287396.
 *
 * Infinities are what Debezium's PostgreSQL connector (PostgresValueConverter, and
 * DateTimeFormat / AbstractColumnValue on its pgoutput path) emits:
 *   timestamptz  the strings 'infinity' and '-infinity' (ZonedTimestamp), in every
 *                time.precision.mode.
 *   timestamp    pgjdbc's PGStatement.DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY,
 *                9223372036825200000 / -9223372036832400000, taken as epoch µs: as they
 *                are for MicroTimestamp (documented in Debezium's "TIMESTAMP type"
 *                section), and the same instant in ms, 9223372036825200 /
 *                -9223372036832400, for Timestamp (adaptive, precision <= 3) and for
 *                Connect's Timestamp (time.precision.mode connect).
 *   date         epoch days -2147472692 for 'infinity' and -2147472691 for '-infinity',
 *                in every mode: Debezium reads them as the LocalDates -5877611-06-21 and
 *                -5877611-06-22, which are Postgres' DATEVAL_NOEND / DATEVAL_NOBEGIN
 *                (int32 max / min days from 2000-01-01) moved to the Unix epoch in int32
 *                arithmetic, as decoderbufs sends them. So +infinity sorts below
 *                -infinity. Undocumented, and an open upstream change (dbz#2524) may
 *                alter it; kept so that consumers that know Debezium's sentinels know ours.
 *   interval     no established Debezium behaviour (its pgoutput path hands the text to
 *                pgjdbc's PGInterval; we found no handling of infinite intervals
 *                there): our choice is int64's ends, what Debezium's double-to-long
 *                MicroDuration arithmetic gives an unbounded duration.
 */
import { INT64_MAX, INT64_MIN, int64, int64FromDouble } from './int64.ts';

const MICROS_PER_DAY = 86_400_000_000;
const MICROS_PER_DAY_N = 86_400_000_000n;

/** Debezium's timestamp infinities in epoch µs (pgjdbc's PGStatement.DATE_*_INFINITY). */
const TIMESTAMP_INFINITY_MICROS = 9_223_372_036_825_200_000n;
const TIMESTAMP_MINUS_INFINITY_MICROS = -9_223_372_036_832_400_000n;
/** Debezium's date infinities in epoch days: Postgres' int32 ends + 10957, wrapped to int32. */
const DATE_INFINITY_DAYS = -2_147_472_692;
const DATE_MINUS_INFINITY_DAYS = -2_147_472_691;

/**
 * Below this many days from the epoch (years 1685 to 2254), days * MICROS_PER_DAY plus
 * a time of day shifted by any zone offset stays under 2^53, so plain doubles are exact.
 */
const EXACT_DAYS = 104_000;

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
 * Days since 1970-01-01 of a proleptic Gregorian date, year 0 being 1 BC. Plain
 * arithmetic (days-from-civil), exact for any year Postgres has: a Date object per
 * value cost more than the rest of a row's mapping, and stops at year 275760.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const monthFromMarch = month > 2 ? month - 3 : month + 9;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
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

/** Two ASCII digits at `at` as a number. */
function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + (text.charCodeAt(at + 1) - 48);
}

/** Four ASCII digits at `at` as a number. */
function fourDigits(text: string, at: number): number {
  return twoDigits(text, at) * 100 + twoDigits(text, at + 2);
}

/**
 * Days since the epoch of the ISO date 'Y..Y-MM-DD' that `text` starts with; the year
 * has four digits or more (Postgres pads it), `bc` counts it before year 1.
 */
function leadingDateDays(text: string, bc: boolean): number {
  const dash = text.indexOf('-', 4);
  let year = 0;
  for (let i = 0; i < dash; i++) year = year * 10 + (text.charCodeAt(i) - 48);
  if (bc) year = 1 - year;
  return daysFromCivil(year, twoDigits(text, dash + 1), twoDigits(text, dash + 4));
}

/**
 * Debezium's Date (and Connect's Date): days since 1970-01-01 of 'YYYY-MM-DD', with
 * more year digits after 9999 and ' BC' for years before 1; infinities as Debezium's.
 */
export function parseDateDays(text: string): number {
  // The common shape: a four-digit year AD.
  if (text.length === 10 && text.charCodeAt(4) === 45 /* - */)
    return daysFromCivil(fourDigits(text, 0), twoDigits(text, 5), twoDigits(text, 8));
  return otherDateDays(text);
}

/** parseDateDays of the rarer shapes: infinities, years past 9999 or before 1 (see otherEpochMicros). */
function otherDateDays(text: string): number {
  if (text === 'infinity') return DATE_INFINITY_DAYS;
  if (text === '-infinity') return DATE_MINUS_INFINITY_DAYS;
  return leadingDateDays(text, text.endsWith(' BC'));
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
 * days * MICROS_PER_DAY + micros through BigInt, for days past EXACT_DAYS: exact, and a
 * bigint unless the sum is safe after all (it can pass int64's end: see
 * parseTimestampMicros). `micros` is an integer of a few days at most (a time of day
 * shifted by a zone offset).
 */
function wideEpochMicros(days: number, micros: number): number | bigint {
  return int64(BigInt(days) * MICROS_PER_DAY_N + BigInt(micros));
}

/** Epoch µs of a timestamp text ('YYYY-MM-DD HH:MM:SS[.ffffff][+TZ][ BC]', '[-]infinity'). */
function readEpochMicros(text: string): number | bigint {
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
    if (days < EXACT_DAYS && days > -EXACT_DAYS) return days * MICROS_PER_DAY + micros;
    return wideEpochMicros(days, micros);
  }
  return otherEpochMicros(text);
}

/**
 * readEpochMicros of the rarer shapes: infinities, and years past 9999 or before 1,
 * whose date has more digits or a ' BC' suffix. Apart, so that the common path stays
 * small enough for V8 to inline.
 */
function otherEpochMicros(text: string): number | bigint {
  if (text === 'infinity') return TIMESTAMP_INFINITY_MICROS;
  if (text === '-infinity') return TIMESTAMP_MINUS_INFINITY_MICROS;
  const bc = text.endsWith(' BC');
  const t = bc ? text.slice(0, -3) : text;
  const timeStart = t.indexOf(' ', 4) + 1;
  const off = offsetIndex(t, timeStart + 7);
  let micros = parseTimeMicros(t.slice(timeStart, off < 0 ? t.length : off));
  if (off >= 0) micros -= parseOffsetSeconds(t, off) * 1_000_000;
  // Years before 1 and after 9999 are all far past EXACT_DAYS.
  return wideEpochMicros(leadingDateDays(t, bc), micros);
}

/**
 * Debezium's MicroTimestamp: epoch µs of 'YYYY-MM-DD HH:MM:SS[.ffffff][+TZ][ BC]'. A zone
 * offset, when present, is applied (timestamptz); without one the value is taken as
 * UTC wall time, as Debezium does for timestamp without time zone.
 * Postgres' last years (after 294247-01-10 04:00:54.775807) are past int64 in µs; they
 * saturate to int64's maximum. Debezium overflows there (its seconds-to-µs conversion
 * saturates, and adding the fraction of the second then wraps to a negative number),
 * which no consumer can use.
 */
export function parseTimestampMicros(text: string): number | bigint {
  const micros = readEpochMicros(text);
  return typeof micros === 'bigint' && micros > INT64_MAX ? INT64_MAX : micros;
}

/** Epoch ms of epoch µs, rounded down (to the earlier instant), as an int64 value. */
function microsToMillis(micros: number | bigint): number | bigint {
  if (typeof micros === 'number') return Math.floor(micros / 1000);
  const rest = micros % 1000n;
  return int64(micros / 1000n - (rest < 0n ? 1n : 0n));
}

/** Debezium's Timestamp and Connect's Timestamp: epoch ms of a timestamp text, rounded down. */
export function parseTimestampMillis(text: string): number | bigint {
  return microsToMillis(readEpochMicros(text));
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * A year as Java's ISO_LOCAL_DATE prints it (four digits at least, a sign when it
 * needs more: '0044', '+12345', '-0001'), which is what Debezium's ZonedTimestamp uses.
 */
function isoYear(year: number): string {
  if (year >= 1000 && year <= 9999) return String(year);
  if (year > 9999) return `+${year}`;
  const digits = String(Math.abs(year)).padStart(4, '0');
  return year < 0 ? `-${digits}` : digits;
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

/**
 * Debezium's ZonedTimestamp text (Java's ISO_OFFSET_DATE_TIME in UTC): 'Z', the
 * fraction without trailing zeros, years as isoYear prints them.
 */
export function formatZonedTimestamp(epochMicros: number | bigint): string {
  let days: number;
  let ofDay: number;
  if (typeof epochMicros === 'number') {
    // Remainder first, then an exact division: no rounding to think about.
    const rest = epochMicros % MICROS_PER_DAY;
    ofDay = rest < 0 ? rest + MICROS_PER_DAY : rest;
    days = (epochMicros - ofDay) / MICROS_PER_DAY;
  } else {
    let rest = epochMicros % MICROS_PER_DAY_N;
    if (rest < 0n) rest += MICROS_PER_DAY_N;
    ofDay = Number(rest);
    days = Number((epochMicros - rest) / MICROS_PER_DAY_N);
  }
  const { year, month, day } = civilFromDays(days);
  const seconds = Math.floor(ofDay / 1_000_000);
  return `${isoYear(year)}-${pad2(month)}-${pad2(day)}T${pad2(Math.floor(seconds / 3600))}:${pad2(
    Math.floor(seconds / 60) % 60,
  )}:${pad2(seconds % 60)}${fraction(ofDay - seconds * 1_000_000)}Z`;
}

/**
 * Debezium's ZonedTimestamp for a timestamptz text. The session's TimeZone is UTC
 * (SESSION_OPTIONS), so Postgres sends 'YYYY-MM-DD HH:MM:SS[.f]+00' with trailing zeros
 * of the fraction dropped, which is already the answer but for two characters.
 * Infinities pass through as the strings Debezium emits.
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
  if (text === 'infinity' || text === '-infinity') return text;
  return formatZonedTimestamp(readEpochMicros(text));
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
 * microseconds with a month of 365.25 / 12 days, as Debezium computes it (in doubles,
 * cast to long: int64FromDouble). Infinities (Postgres 17+) are int64's ends.
 */
export function parseIntervalMicros(text: string): number | bigint {
  const m = INTERVAL_ISO.exec(text);
  if (!m) {
    if (text === 'infinity') return INT64_MAX;
    if (text === '-infinity') return INT64_MIN;
    throw new Error(`unexpected interval text ${JSON.stringify(text)}`);
  }
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
  return int64FromDouble(Math.trunc(seconds * 1_000_000) + secMicros);
}

/**
 * time.precision.mode=isostring (Debezium's IsoDate, IsoTime, IsoTimestamp) and
 * nanoseconds (NanoTime, NanoTimestamp). timestamptz and timetz keep ZonedTimestamp and
 * ZonedTime in these modes too, as in every mode.
 *   IsoDate       'YYYY-MM-DDZ' (ISO_OFFSET_DATE at UTC midnight); infinities are the
 *                 LocalDates Debezium reads them as (see the header): '-5877611-06-21Z'
 *                 for 'infinity', '-5877611-06-22Z' for '-infinity'.
 *   IsoTime       'HH:MM:SS[.f]Z' (ISO_OFFSET_TIME: the fraction without trailing zeros);
 *                 '24:00:00' is midnight, '00:00:00Z' (LocalTime of 0:00 plus 24 hours).
 *   IsoTimestamp  as ZonedTimestamp's text (ISO_OFFSET_DATE_TIME at UTC); infinities are
 *                 the instants of pgjdbc's infinity sentinels, taken as µs as Debezium
 *                 takes them (POSITIVE_INFINITY_LOCAL_DATE_TIME).
 *   NanoTime      µs of the day × 1000.
 *   NanoTimestamp epoch µs × 1000; infinities are int64's ends (Debezium's
 *                 convertTimestampToEpochNanos). Other values past int64 in ns (before
 *                 1677-09-21, after 2262-04-11) throw NanosOutOfRangeError: Debezium
 *                 fails on them too (its documentation says so).
 */
export function formatIsoDate(text: string): string {
  const { year, month, day } = civilFromDays(parseDateDays(text));
  return `${isoYear(year)}-${pad2(month)}-${pad2(day)}Z`;
}

export function formatIsoTime(text: string): string {
  const micros = parseTimeMicros(text) % MICROS_PER_DAY;
  const seconds = Math.floor(micros / 1_000_000);
  return `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(
    seconds % 60,
  )}${fraction(micros - seconds * 1_000_000)}Z`;
}

export function formatIsoTimestamp(text: string): string {
  return formatZonedTimestamp(readEpochMicros(text));
}

export function parseTimeNanos(text: string): number {
  return parseTimeMicros(text) * 1000;
}

export class NanosOutOfRangeError extends Error {}

export function parseTimestampNanos(text: string): number | bigint {
  if (text === 'infinity') return INT64_MAX;
  if (text === '-infinity') return INT64_MIN;
  const nanos = BigInt(readEpochMicros(text)) * 1000n;
  if (nanos > INT64_MAX || nanos < INT64_MIN)
    throw new NanosOutOfRangeError('is outside the range of epoch nanoseconds in an int64');
  return int64(nanos);
}

/**
 * interval.handling.mode=string: Debezium's io.debezium.time.Interval text,
 * 'P<y>Y<m>M<d>DT<h>H<m>M<s>S' with every part present (Interval.toIsoString over
 * PGInterval's fields), seconds as a plain decimal without trailing zeros ('6.5', '0',
 * '-4.000005'). Postgres' ISO 8601 output has the same fields (years and months from
 * its months, days, then hours, minutes and seconds of its time, each with its own
 * sign), only with the zero ones left out. Infinities (Postgres 17+) have no Debezium
 * form (PGInterval does not read them); they pass as 'infinity' and '-infinity'.
 */
export function formatIntervalString(text: string): string {
  const m = INTERVAL_ISO.exec(text);
  if (!m) {
    if (text === 'infinity' || text === '-infinity') return text;
    throw new Error(`unexpected interval text ${JSON.stringify(text)}`);
  }
  const n = (i: number) => (m[i] === undefined ? 0 : Number(m[i]));
  let seconds = m[6] ?? '0';
  if (seconds.includes('.')) seconds = seconds.replace(/0+$/, '').replace(/\.$/, '');
  if (/^-?0$/.test(seconds)) seconds = '0';
  return `P${n(1)}Y${n(2)}M${n(3)}DT${n(4)}H${n(5)}M${seconds}S`;
}
