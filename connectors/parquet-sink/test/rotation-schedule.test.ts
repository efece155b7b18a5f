/**
 * rotate.schedule.interval.ms in `timezone`, by Confluent's rule (rotation-schedule.ts):
 * multiples of the interval from local midnight, the day's last one cut at the next
 * midnight; across DST changes, in a zone whose clocks skip midnight, and through the
 * writer on a ManualClock.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, parseConfig } from '../../../src/connect/api/index.ts';
import { parquetSinkConfigDefs, validateSinkConfig } from '../config.ts';
import { LocalStore } from '../local-store.ts';
import { RotationSchedule } from '../rotation-schedule.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { orderRecords, sinkConfig } from './fixtures.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();

/** The boundaries the schedule gives one after the other, from `from`. */
function boundaries(s: RotationSchedule, from: string, count: number): string[] {
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < count; i++) {
    t = s.next(t);
    out.push(iso(t));
  }
  return out;
}

describe('rotation schedule', () => {
  it('in UTC, with an interval dividing a day, is the plain multiples of the interval', () => {
    const schedules = [60_000, 15 * 60_000, HOUR, 3 * HOUR, 8 * HOUR, DAY].map(
      (interval) => new RotationSchedule(interval, 'UTC'),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2100-01-01T00:00:00Z') }),
        fc.constantFrom(...schedules),
        (now, s) => {
          const interval = s.intervalMs;
          expect(s.next(now)).toBe(Math.floor(now / interval) * interval + interval);
        },
      ),
    );
  });

  it('hourly in Europe/Paris closes on the local hour across both DST changes', () => {
    const s = new RotationSchedule(HOUR, 'Europe/Paris');

    // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z).
    expect(boundaries(s, '2026-03-28T22:30:00Z', 4)).toEqual([
      '2026-03-28T23:00:00.000Z', // 00:00 CET
      '2026-03-29T00:00:00.000Z', // 01:00 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST
      '2026-03-29T02:00:00.000Z', // 04:00 CEST
    ]);
    // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z); the day has 25 hours.
    expect(boundaries(s, '2026-10-24T23:30:00Z', 4)).toEqual([
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET
      '2026-10-25T02:00:00.000Z', // 03:00 CET
      '2026-10-25T03:00:00.000Z', // 04:00 CET
    ]);
  });

  it('daily in Europe/Paris closes at local midnight, and on the 25-hour day also 24 hours after it, as Confluent does', () => {
    const s = new RotationSchedule(DAY, 'Europe/Paris');

    expect(boundaries(s, '2026-03-28T12:00:00Z', 3)).toEqual([
      '2026-03-28T23:00:00.000Z', // Sunday 00:00 CET
      '2026-03-29T22:00:00.000Z', // Monday 00:00 CEST: the 23-hour day's step is cut there
      '2026-03-30T22:00:00.000Z',
    ]);
    expect(boundaries(s, '2026-10-24T12:00:00Z', 3)).toEqual([
      '2026-10-24T22:00:00.000Z', // Sunday 00:00 CEST
      '2026-10-25T22:00:00.000Z', // 23:00 CET: one interval of elapsed time into the 25-hour day
      '2026-10-25T23:00:00.000Z', // Monday 00:00 CET
    ]);
  });

  it('steps by elapsed time from local midnight, cutting the last step of each day at the next midnight', () => {
    const s = new RotationSchedule(7 * HOUR, 'Europe/Paris');

    // An ordinary day: 07:00, 14:00, 21:00 CET, then midnight.
    expect(boundaries(s, '2026-03-26T23:00:00Z', 4)).toEqual([
      '2026-03-27T06:00:00.000Z',
      '2026-03-27T13:00:00.000Z',
      '2026-03-27T20:00:00.000Z',
      '2026-03-27T23:00:00.000Z',
    ]);
    // The 23-hour day: 7, 14 and 21 hours after midnight read 08:00, 15:00, 22:00 CEST.
    expect(boundaries(s, '2026-03-28T23:00:00Z', 4)).toEqual([
      '2026-03-29T06:00:00.000Z',
      '2026-03-29T13:00:00.000Z',
      '2026-03-29T20:00:00.000Z',
      '2026-03-29T22:00:00.000Z', // midnight CEST, 23 hours after the last
    ]);
  });

  it('an interval longer than a day closes at every local midnight', () => {
    const s = new RotationSchedule(3 * DAY, 'Asia/Tokyo');

    expect(boundaries(s, '2026-05-01T03:00:00Z', 2)).toEqual([
      '2026-05-01T15:00:00.000Z',
      '2026-05-02T15:00:00.000Z',
    ]);
  });

  it('where the clocks skip midnight (America/Santiago, 2026-09-06), the day starts at the jump', () => {
    const s = new RotationSchedule(HOUR, 'America/Santiago');

    // 00:00 -04 does not exist: 04:00Z reads 01:00 -03.
    expect(iso(s.startOfDay(at('2026-09-06T15:00:00Z')))).toBe('2026-09-06T04:00:00.000Z');
    expect(boundaries(s, '2026-09-06T03:30:00Z', 3)).toEqual([
      '2026-09-06T04:00:00.000Z', // the end of Saturday 5th, at the jump
      '2026-09-06T05:00:00.000Z', // 02:00 -03
      '2026-09-06T06:00:00.000Z',
    ]);
  });

  it('gives, for any instant and zone, a later boundary at most one interval away that every instant before it shares', () => {
    const zones = [
      'UTC',
      'Europe/Paris',
      'America/New_York',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: at('2020-01-01T00:00:00Z'), max: at('2030-01-01T00:00:00Z') }),
        fc.constantFrom(...zones),
        fc.integer({ min: 1, max: 2 * DAY }),
        (now, zone, interval) => {
          const s = new RotationSchedule(interval, zone);
          const next = s.next(now);

          expect(next).toBeGreaterThan(now);
          expect(next - now).toBeLessThanOrEqual(interval);
          expect(s.next(next - 1)).toBe(next);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('rotate.schedule.interval.ms config', () => {
  it('refuses a timezone Intl does not know, by name, when the schedule needs it', () => {
    const parsed = parseConfig(parquetSinkConfigDefs, {
      'flush.size': '10',
      'store.url': 'file:///tmp/lake',
      'rotate.schedule.interval.ms': '3600000',
      timezone: 'Mars/Olympus_Mons',
    });

    expect(validateSinkConfig(parsed.values)).toEqual([
      {
        key: 'timezone',
        value: 'Mars/Olympus_Mons',
        message: "unknown timezone 'Mars/Olympus_Mons'",
      },
    ]);
  });
});

describe('rotate.schedule.interval.ms through the writer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rotation-schedule-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a daily schedule in Europe/Paris writes open files at local midnight, on the DST day too', async () => {
    const clock = new ManualClock(at('2026-03-28T12:00:00Z'));
    const w = new ParquetSinkWriter(
      sinkConfig(
        { kind: 'local', url: '' },
        {
          flushSize: 1000,
          rotateScheduleIntervalMs: DAY,
          partitioner: {
            ...sinkConfig({ kind: 'local', url: '' }).partitioner,
            timezone: 'Europe/Paris',
          },
        },
      ),
      new LocalStore(pathToFileURL(join(dir, 'lake')).href),
      clock,
      { encoder: 'inline' },
    );
    const folder = join(dir, 'lake', 'topics', 'orders', 'partition=0');
    const files = () =>
      existsSync(folder) ? readdirSync(folder).filter((f) => !f.startsWith('.')) : [];
    /** Move the clock to `iso`, let an idle put run the schedule, and list the files. */
    const idleAt = async (time: string) => {
      clock.set(at(time));
      await w.put([]);
      await w.flushed();
      return files();
    };
    try {
      await w.open([{ topic: 'orders', partition: 0 }]);
      await w.put(orderRecords('orders', 0, 0, 5));
      await w.flushed();

      expect(await idleAt('2026-03-28T22:59:59.999Z')).toEqual([]); // 23:59:59.999 CET
      expect(await idleAt('2026-03-28T23:00:00.000Z')).toEqual([
        'orders+0+0000000000.snappy.parquet',
      ]);

      clock.set(at('2026-03-29T10:00:00Z'));
      await w.put(orderRecords('orders', 0, 5, 5));
      expect(await idleAt('2026-03-29T21:59:59.999Z')).toHaveLength(1); // 23:59:59.999 CEST
      expect(await idleAt('2026-03-29T22:00:00.000Z')).toEqual([
        'orders+0+0000000000.snappy.parquet',
        'orders+0+0000000005.snappy.parquet',
      ]);
    } finally {
      await w.stop();
    }
  });
});
