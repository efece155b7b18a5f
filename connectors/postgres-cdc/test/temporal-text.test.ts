import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from '../src/int64.ts';
import {
  formatZonedTimestamp,
  formatZonedTimestampText,
  parseDateDays,
  parseIntervalMicros,
  parseTimestampMicros,
  parseTimestampMillis,
} from '../src/temporal-text.ts';

const MICROS_PER_DAY = 86_400_000_000n;
/** Days in 400 Gregorian years: the calendar repeats with this period. */
const CYCLE_DAYS = 146_097;

const pad = (n: number | bigint, width: number) => String(n).padStart(width, '0');

/** An int64 value as schema.ts carries it: a number when safe, else a bigint. */
function asInt64(v: bigint): number | bigint {
  return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v;
}

/**
 * The reference calendar: Date's, moved by whole 400-year cycles into the range Date
 * handles (±275760 years), so it covers Postgres' 5874897 AD too.
 */
function civil(days: number): { year: number; month: number; day: number } {
  const cycles = Math.trunc(days / CYCLE_DAYS);
  const d = new Date((days - cycles * CYCLE_DAYS) * 86_400_000);
  return {
    year: d.getUTCFullYear() + 400 * cycles,
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
  };
}

function daysOf(year: number, month: number, day: number): number {
  const cycles = Math.trunc(year / 400);
  const d = new Date(0);
  d.setUTCFullYear(year - 400 * cycles, month - 1, day);
  return d.getTime() / 86_400_000 + cycles * CYCLE_DAYS;
}

/** Postgres' range: 4714-11-24 BC (Julian day 0) to 5874897-12-31 / 294276-12-31. */
const FIRST_DAY = daysOf(-4713, 11, 24);
const LAST_DATE_DAY = daysOf(5874897, 12, 31);
const LAST_TIMESTAMP_DAY = daysOf(294276, 12, 31);
const FIRST_MICROS = BigInt(FIRST_DAY) * MICROS_PER_DAY;
const LAST_MICROS = BigInt(LAST_TIMESTAMP_DAY + 1) * MICROS_PER_DAY - 1n;

/** A date as Postgres prints it under DateStyle ISO (' BC' for years before 1). */
function dateText(days: number): string {
  const { year, month, day } = civil(days);
  const date = `${pad(year <= 0 ? 1 - year : year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  return year <= 0 ? `${date} BC` : date;
}

/** A timestamp at `epochMicros` as Postgres prints it, at UTC offset `offsetSeconds`. */
function timestampText(epochMicros: bigint, offsetSeconds: number | null): string {
  const local = epochMicros + BigInt(offsetSeconds ?? 0) * 1_000_000n;
  let days = local / MICROS_PER_DAY;
  if (days * MICROS_PER_DAY > local) days--;
  const ofDay = Number(local - days * MICROS_PER_DAY);
  const s = Math.floor(ofDay / 1_000_000);
  const micros = ofDay - s * 1_000_000;
  const frac = micros === 0 ? '' : `.${pad(micros, 6).replace(/0+$/, '')}`;
  const time = `${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}`;
  let zone = '';
  if (offsetSeconds !== null) {
    const abs = Math.abs(offsetSeconds);
    zone = `${offsetSeconds < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600), 2)}`;
    if (abs % 3600) zone += `:${pad(Math.floor(abs / 60) % 60, 2)}`;
  }
  const date = dateText(Number(days));
  return date.endsWith(' BC')
    ? `${date.slice(0, -3)} ${time}${frac}${zone} BC`
    : `${date} ${time}${frac}${zone}`;
}

/**
 * Debezium's ZonedTimestamp: Java's ISO_OFFSET_DATE_TIME in UTC. Its year has four
 * digits at least and a sign when it needs more ('+12345', '-0001').
 */
function isoReference(epochMicros: bigint): string {
  let days = epochMicros / MICROS_PER_DAY;
  if (days * MICROS_PER_DAY > epochMicros) days--;
  const { year, month, day } = civil(Number(days));
  const y = year > 9999 ? `+${year}` : year < 0 ? `-${pad(-year, 4)}` : pad(year, 4);
  const ofDay = Number(epochMicros - days * MICROS_PER_DAY);
  const s = Math.floor(ofDay / 1_000_000);
  const micros = ofDay - s * 1_000_000;
  const frac = micros === 0 ? '' : `.${pad(micros, 6).replace(/0+$/, '')}`;
  const time = `${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}`;
  return `${y}-${pad(month, 2)}-${pad(day, 2)}T${time}${frac}Z`;
}

/**
 * Epoch µs: Postgres' whole range, where numbers stop holding every µs (±2^53, years
 * 1685 and 2254) and int64 ends (year 294247), and the common years.
 */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const around = (v: bigint) => fc.bigInt({ min: v - 100_000_000_000n, max: v + 100_000_000_000n });
const anyMicros = fc.oneof(
  fc.bigInt({ min: FIRST_MICROS, max: LAST_MICROS }),
  fc.bigInt({ min: -SAFE, max: SAFE }),
  fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }),
  around(SAFE),
  around(-SAFE),
  around(INT64_MAX),
);
const offsets = fc.oneof(
  fc.constant(0),
  fc.integer({ min: -15, max: 15 }).map((h) => h * 3600),
  fc.integer({ min: -15 * 60, max: 15 * 60 }).map((m) => m * 60),
);
const floorDiv = (a: bigint, b: bigint) => (a % b < 0n ? a / b - 1n : a / b);

describe('dates', () => {
  it('reads any date Postgres has, AD and BC, as days since the epoch (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: FIRST_DAY, max: LAST_DATE_DAY }),
          fc.integer({ min: -800_000, max: 2_932_896 }),
        ),
        (days) => {
          expect(parseDateDays(dateText(days))).toBe(days);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("reads the first and last dates and gives infinities Debezium's epoch days", () => {
    expect(parseDateDays('4714-11-24 BC')).toBe(-2_440_588);
    expect(parseDateDays('5874897-12-31')).toBe(LAST_DATE_DAY);
    expect(parseDateDays('infinity')).toBe(-2_147_472_692);
    expect(parseDateDays('-infinity')).toBe(-2_147_472_691);
  });
});

describe('timestamps', () => {
  it('reads epoch µs exactly over the whole range, a bigint only past 2^53 (property)', () => {
    fc.assert(
      fc.property(anyMicros, fc.option(offsets), (micros, offset) => {
        const expected = micros > INT64_MAX ? INT64_MAX : asInt64(micros);
        expect(parseTimestampMicros(timestampText(micros, offset))).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads epoch ms rounded down, exactly, over the whole range (property)', () => {
    fc.assert(
      fc.property(anyMicros, fc.option(offsets), (micros, offset) => {
        const expected = asInt64(floorDiv(micros, 1000n));
        expect(parseTimestampMillis(timestampText(micros, offset))).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('switches from number to bigint exactly where 2^53 µs is passed', () => {
    expect(parseTimestampMicros('2255-06-05 23:47:34.740991')).toBe(9_007_199_254_740_991);
    expect(parseTimestampMicros('2255-06-05 23:47:34.740992')).toBe(9_007_199_254_740_992n);
    expect(parseTimestampMicros('1684-07-28 00:12:25.259009')).toBe(-9_007_199_254_740_991);
    expect(parseTimestampMicros('1684-07-28 00:12:25.259008')).toBe(-9_007_199_254_740_992n);
  });

  it('saturates µs past int64 to its maximum, and keeps ms exact there', () => {
    expect(parseTimestampMicros('294247-01-10 04:00:54.775807')).toBe(INT64_MAX);
    expect(parseTimestampMicros('294247-01-10 04:00:54.775808')).toBe(INT64_MAX);
    expect(parseTimestampMicros('294276-12-31 23:59:59.999999+00')).toBe(INT64_MAX);
    expect(parseTimestampMillis('294276-12-31 23:59:59.999999')).toBe(9_224_318_015_999_999n);
  });

  it("gives infinities Debezium's values: pgjdbc's DATE_*_INFINITY as µs, and in ms", () => {
    expect(parseTimestampMicros('infinity')).toBe(9_223_372_036_825_200_000n);
    expect(parseTimestampMicros('-infinity')).toBe(-9_223_372_036_832_400_000n);
    expect(parseTimestampMillis('infinity')).toBe(9_223_372_036_825_200n);
    expect(parseTimestampMillis('-infinity')).toBe(-9_223_372_036_832_400n);
  });
});

describe('ZonedTimestamp text', () => {
  it('is Java ISO_OFFSET_DATE_TIME in UTC, from epoch µs or from the text (property)', () => {
    fc.assert(
      fc.property(anyMicros, offsets, (micros, offset) => {
        const expected = isoReference(micros);
        expect(formatZonedTimestamp(asInt64(micros))).toBe(expected);
        expect(formatZonedTimestampText(timestampText(micros, offset))).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('writes years outside 0..9999 as Java does, up to the last Postgres has', () => {
    expect(formatZonedTimestampText('12345-06-07 08:09:10.5+00')).toBe('+12345-06-07T08:09:10.5Z');
    expect(formatZonedTimestampText('275760-09-13 00:00:00.000001+00')).toBe(
      '+275760-09-13T00:00:00.000001Z',
    );
    expect(formatZonedTimestampText('294276-12-31 23:59:59.999999+00')).toBe(
      '+294276-12-31T23:59:59.999999Z',
    );
    expect(formatZonedTimestampText('0001-01-01 00:00:00+00 BC')).toBe('0000-01-01T00:00:00Z');
    expect(formatZonedTimestampText('0002-01-01 00:00:00+00 BC')).toBe('-0001-01-01T00:00:00Z');
    expect(formatZonedTimestampText('0001-01-01 00:30:00+01 BC')).toBe('-0001-12-31T23:30:00Z');
    expect(formatZonedTimestampText('4714-11-24 00:00:00+00 BC')).toBe('-4713-11-24T00:00:00Z');
  });

  it('passes infinities through as the strings Debezium emits', () => {
    expect(formatZonedTimestampText('infinity')).toBe('infinity');
    expect(formatZonedTimestampText('-infinity')).toBe('-infinity');
  });
});

describe('intervals', () => {
  it('gives int64 MicroDurations, saturating as Java casts a double to long', () => {
    expect(parseIntervalMicros('P1Y2M3DT4H5M6.5S')).toBe(
      Math.trunc((14 * 30.4375 + 3) * 86_400_000_000) +
        (4 * 3600 + 5 * 60 + 6) * 1_000_000 +
        500_000,
    );
    expect(parseIntervalMicros('P1000Y')).toBe(31_557_600_000_000_000n);
    expect(parseIntervalMicros('P178000000Y')).toBe(INT64_MAX);
    expect(parseIntervalMicros('P-178000000Y')).toBe(INT64_MIN);
  });

  it("gives Postgres 17's infinite intervals int64's ends", () => {
    expect(parseIntervalMicros('infinity')).toBe(INT64_MAX);
    expect(parseIntervalMicros('-infinity')).toBe(INT64_MIN);
  });
});
