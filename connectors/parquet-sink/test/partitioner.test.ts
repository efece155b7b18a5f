import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/connect/api/index.ts';
import { createPartitioner, hiveEscape, type PartitionerSettings } from '../partitioner.ts';
import { PathFormatter } from '../path-format.ts';
import { sinkRecord, T0 } from './fixtures.ts';

const base: PartitionerSettings = {
  className: 'Default',
  fieldNames: [],
  pathFormat: '',
  durationMs: -1,
  locale: 'en',
  timezone: 'UTC',
  timestampExtractor: 'Record',
  timestampField: 'timestamp',
};

function partitioner(over: Partial<PartitionerSettings>, clock = new ManualClock(T0)) {
  return createPartitioner({ ...base, ...over }, clock);
}

describe('partitioners', () => {
  it('Default names the folder after the Kafka partition, under its Confluent class name too', () => {
    for (const className of [
      'Default',
      'io.confluent.connect.storage.partitioner.DefaultPartitioner',
    ]) {
      expect(partitioner({ className }).encodePartition(sinkRecord('t', 3, 0, {}))).toBe(
        'partition=3',
      );
    }
  });

  it('Field names folders field=value, escaping as Hive does and naming nulls as Hive does', () => {
    const p = partitioner({
      className: 'io.confluent.connect.storage.partitioner.FieldPartitioner',
      fieldNames: ['country', 'source.db'],
    });
    const record = sinkRecord('t', 0, 0, { country: 'a/b=c', source: { db: 'shop' } });
    expect(p.encodePartition(record)).toBe('country=a%2Fb%3Dc/source.db=shop');
    expect(p.encodePartition(sinkRecord('t', 0, 0, { country: null }))).toBe(
      'country=__HIVE_DEFAULT_PARTITION__/source.db=__HIVE_DEFAULT_PARTITION__',
    );
    expect(() => p.encodePartition(sinkRecord('t', 0, 7, 'text'))).toThrow(/t-0@7.*not a struct/);
  });

  it('TimeBased formats path.format in the timezone, floored to partition.duration.ms', () => {
    const p = partitioner({
      className: 'TimeBased',
      pathFormat: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm",
      durationMs: 15 * 60_000,
      timezone: 'America/New_York',
    });
    // 2026-11-28T22:44:59Z is 17:44:59 in New York (EST, UTC-5).
    const record = sinkRecord('t', 0, 0, {}, { timestamp: T0 + 14 * 60_000 + 59_000 });
    expect(p.encodePartition(record)).toBe('year=2026/month=11/day=28/hour=17/minute=30');
  });

  it('Daily and Hourly floor to local midnight and hour, with month names from the locale', () => {
    const daily = partitioner({ className: 'Daily', timezone: 'Asia/Tokyo' });
    // 22:30Z is 07:30 the next day in Tokyo.
    expect(daily.encodePartition(sinkRecord('t', 0, 0, {}))).toBe('year=2026/month=11/day=29');
    const hourly = partitioner({ className: 'HourlyPartitioner' });
    expect(hourly.encodePartition(sinkRecord('t', 0, 0, {}))).toBe(
      'year=2026/month=11/day=28/hour=22',
    );
    const named = new PathFormatter("MMMM/EEEE/yy/'x'''", 'UTC', 'de-DE');
    expect(named.format(T0)).toBe("November/Samstag/26/x'");
  });

  it('a day folder spans 23 or 25 hours across daylight-saving changes', () => {
    const p = partitioner({ className: 'Daily', timezone: 'Europe/Berlin' });
    const at = (iso: string) =>
      p.encodePartition(sinkRecord('t', 0, 0, {}, { timestamp: Date.parse(iso) }));
    // 2026-10-25 has 25 hours in Berlin: 23:30 local is 22:30Z.
    expect(at('2026-10-24T22:30:00Z')).toBe('year=2026/month=10/day=25');
    expect(at('2026-10-25T22:30:00Z')).toBe('year=2026/month=10/day=25');
    expect(at('2026-10-25T23:00:00Z')).toBe('year=2026/month=10/day=26');
  });

  it('RecordField reads epoch millis or ISO text from the value; Wallclock reads the task clock', () => {
    const field = partitioner({
      className: 'Hourly',
      timestampExtractor: 'RecordField',
      timestampField: 'after.ts',
    });
    expect(
      field.encodePartition(sinkRecord('t', 0, 0, { after: { ts: '2026-01-02T03:04:05Z' } })),
    ).toBe('year=2026/month=01/day=02/hour=03');
    expect(field.encodePartition(sinkRecord('t', 0, 0, { after: { ts: 0 } }))).toBe(
      'year=1970/month=01/day=01/hour=00',
    );
    expect(() => field.encodePartition(sinkRecord('t', 0, 5, { after: {} }))).toThrow(
      /timestamp.field 'after.ts' of t-0@5/,
    );
    const clock = new ManualClock(Date.parse('2030-05-06T07:00:00Z'));
    const wall = partitioner(
      {
        className: 'Hourly',
        timestampExtractor:
          'io.confluent.connect.storage.partitioner.TimeBasedPartitioner$WallclockTimestampExtractor',
      },
      clock,
    );
    expect(wall.encodePartition(sinkRecord('t', 0, 0, {}))).toBe(
      'year=2030/month=05/day=06/hour=07',
    );
  });

  it('rejects unknown classes, extractors and pattern letters with the offending name', () => {
    expect(() => partitioner({ className: 'Weekly' })).toThrow(
      /unknown partitioner.class 'Weekly'/,
    );
    expect(() => partitioner({ className: 'Daily', timestampExtractor: 'Ingest' })).toThrow(
      /unknown timestamp.extractor 'Ingest'/,
    );
    expect(() =>
      partitioner({ className: 'TimeBased', pathFormat: 'YYYY/QQ', durationMs: 1 }),
    ).toThrow(/unsupported letter 'Q'/);
  });

  it('hiveEscape leaves ordinary text alone', () => {
    expect(hiveEscape('shop-2026_a.b c')).toBe('shop-2026_a.b c');
  });
});
