import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bigIntBytes,
  decimalBytes,
  formatZonedTimestamp,
  formatZonedTimestampText,
  parseDateDays,
  parseTimestampMicros,
  safeIntegerBytes,
  unscaled,
} from '../src/text-values.ts';

const MICROS_PER_DAY = 86_400_000_000;
/** Epoch seconds of 4713-01-01 BC (Postgres' first date), 0000-01-01 and 9999-12-31 23:59:59. */
const FIRST_PG_SECOND = -210_866_803_200;
const YEAR_0_SECOND = -62_167_219_200;
const LAST_4_DIGIT_SECOND = 253_402_300_799;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** A date as Postgres prints it under DateStyle ISO (' BC' for years before 1). */
function dateText(d: Date): string {
  const year = d.getUTCFullYear();
  const y = year <= 0 ? `${pad(1 - year, 4)}` : pad(year, 4);
  return `${y}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}${year <= 0 ? ' BC' : ''}`;
}

/** A timestamp at `epochMicros` as Postgres prints it, at UTC offset `offsetSeconds`. */
function timestampText(epochMicros: number, offsetSeconds: number | null): string {
  const local = epochMicros + (offsetSeconds ?? 0) * 1_000_000;
  const days = Math.floor(local / MICROS_PER_DAY);
  const d = new Date(0);
  d.setUTCFullYear(1970, 0, 1 + days);
  const ofDay = local - days * MICROS_PER_DAY;
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
  const date = dateText(d);
  return date.endsWith(' BC')
    ? `${date.slice(0, -3)} ${time}${frac}${zone} BC`
    : `${date} ${time}${frac}${zone}`;
}

/** Debezium's ZonedTimestamp as Date prints it (the reference for the arithmetic). */
function isoReference(epochMicros: number): string {
  const iso = new Date(Math.floor(epochMicros / 1000)).toISOString();
  const micros = epochMicros - Math.floor(epochMicros / 1_000_000) * 1_000_000;
  const frac = micros === 0 ? '' : `.${pad(micros, 6).replace(/0+$/, '')}`;
  return `${iso.slice(0, 19)}${frac}Z`;
}

/**
 * Timestamps as epoch µs. Numbers hold every µs only within ±2^53 (years 1685 to 2255;
 * kept a day inside, so that zone offsets stay within it too); whole seconds
 * (multiples of 1e6 = 2^6 * 15625) stay exact over the whole range.
 */
const EXACT = Number.MAX_SAFE_INTEGER - MICROS_PER_DAY;
const exactMicros = fc.integer({ min: -EXACT, max: EXACT });
const wholeSeconds = (min: number, max: number) =>
  fc.integer({ min, max }).map((s) => s * 1_000_000);
const anyMicros = fc.oneof(exactMicros, wholeSeconds(FIRST_PG_SECOND, LAST_4_DIGIT_SECOND));
const fourDigitYearMicros = fc.oneof(exactMicros, wholeSeconds(YEAR_0_SECOND, LAST_4_DIGIT_SECOND));
const offsets = fc.oneof(
  fc.constant(0),
  fc.integer({ min: -15, max: 15 }).map((h) => h * 3600),
  fc.integer({ min: -15 * 60, max: 15 * 60 }).map((m) => m * 60),
);

describe('text values of dates and timestamps', () => {
  it('reads dates AD and BC as days since the epoch (property)', () => {
    fc.assert(
      fc.property(anyMicros, (micros) => {
        const d = new Date(Math.floor(micros / 1000));
        const days = Math.floor(micros / MICROS_PER_DAY);
        expect(parseDateDays(dateText(d))).toBe(days);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads timestamps with and without a zone, AD and BC (property)', () => {
    fc.assert(
      fc.property(anyMicros, fc.option(offsets), (micros, offset) => {
        expect(parseTimestampMicros(timestampText(micros, offset))).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes ZonedTimestamp text as Date would, from epoch µs or from the text (property)', () => {
    fc.assert(
      fc.property(fourDigitYearMicros, offsets, (micros, offset) => {
        expect(formatZonedTimestamp(micros)).toBe(isoReference(micros));
        expect(formatZonedTimestampText(timestampText(micros, offset))).toBe(isoReference(micros));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes years outside 0..9999 as Date does', () => {
    const beforeYear0 = (YEAR_0_SECOND - 1) * 1_000_000;
    expect(formatZonedTimestamp(beforeYear0)).toBe(isoReference(beforeYear0));
    expect(formatZonedTimestampText('12345-06-07 08:09:10.5+00')).toBe(
      isoReference(parseTimestampMicros('12345-06-07 08:09:10.5+00')),
    );
  });
});

describe('decimal bytes', () => {
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
