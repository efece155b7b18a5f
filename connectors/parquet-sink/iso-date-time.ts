/**
 * ISO-8601 text as Confluent's RecordFieldTimestampExtractor reads a STRING
 * `timestamp.field`: first as epoch milliseconds when it is 1 to 19 digits with an
 * optional minus, otherwise with Joda-Time's ISODateTimeFormat.dateTimeParser():
 *
 *   date-opt-time  yyyy['-'MM['-'dd]] | yyyy'-'DDD  then optionally 'T'[time][offset]
 *   time           'T' HH[':'mm[':'ss]][('.'|',')digits]  [offset]   (on 1970-01-01)
 *   offset         'Z' | ('+'|'-')HH[':'mm]
 * The fraction belongs to the last unit given (T10.5 is 10:30). Text without an offset
 * is read in UTC: Joda reads it in the JVM's default zone, which is UTC in Confluent's
 * images unless TZ says otherwise. ISO week dates (2026-W05-3), which Joda also reads,
 * are refused with the rest: undefined means "not a timestamp".
 */

const NUMERIC = /^-?[0-9]{1,19}$/;
const DATE = /^([+-]?\d{4,9})(?:-(\d{3})(?!\d)|-(\d{2})(?:-(\d{2}))?)?/;
const TIME = /^(\d{2})(?::(\d{2})(?::(\d{2}))?)?(?:[.,](\d+))?/;
const OFFSET = /^(?:Z|([+-])(\d{2})(?::?(\d{2}))?)$/;

export function parseTimestampText(text: string): number | undefined {
  if (NUMERIC.test(text)) {
    const n = BigInt(text);
    // Long.valueOf overflows past 19 digits' range; Joda then fails on the digits too.
    if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
    return Number(n);
  }
  let rest = text;
  let dayMs = 0;
  const d = rest.startsWith('T') ? null : DATE.exec(rest);
  if (d) {
    const year = Number(d[1]);
    if (d[2] !== undefined) {
      const ordinal = Number(d[2]);
      const days = isLeap(year) ? 366 : 365;
      if (ordinal < 1 || ordinal > days) return undefined;
      dayMs = utc(year, 0, ordinal);
    } else {
      const month = d[3] === undefined ? 1 : Number(d[3]);
      const day = d[4] === undefined ? 1 : Number(d[4]);
      if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
      dayMs = utc(year, month - 1, day);
    }
    rest = rest.slice(d[0].length);
    if (rest === '') return dayMs;
  } else if (!rest.startsWith('T')) {
    return undefined;
  }
  if (!rest.startsWith('T')) return undefined;
  rest = rest.slice(1);
  let timeMs = 0;
  const t = TIME.exec(rest);
  if (t) {
    const units = [t[1], t[2], t[3]].map((u) => (u === undefined ? undefined : Number(u)));
    const [h = 0, m = 0, s = 0] = units;
    if (h > 23 || m > 59 || s > 59) return undefined;
    timeMs = ((h * 60 + m) * 60 + s) * 1000;
    if (t[4] !== undefined) {
      const lastUnitMs = t[3] !== undefined ? 1000 : t[2] !== undefined ? 60_000 : 3_600_000;
      timeMs += Math.floor(Number(`0.${t[4]}`) * lastUnitMs);
    }
    rest = rest.slice(t[0].length);
  } else if (d === null) {
    return undefined; // 'T' alone names no time
  }
  let offsetMs = 0;
  if (rest !== '') {
    const o = OFFSET.exec(rest);
    if (!o) return undefined;
    if (o[1] !== undefined) {
      const hours = Number(o[2]);
      const minutes = o[3] === undefined ? 0 : Number(o[3]);
      if (hours > 23 || minutes > 59) return undefined;
      offsetMs = (o[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
    }
  }
  return dayMs + timeMs - offsetMs;
}

function utc(year: number, monthIndex: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day); // Date.UTC maps years 0-99 to 1900-1999
  return date.getTime();
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysIn(year: number, month: number): number {
  return [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
}
