import { describe, expect, it } from 'vitest';
import { ManualClock, parseConfig, Schemas } from '../../../src/connect/api/index.ts';
import { parquetSinkConfigDefs, validateSinkConfig } from '../config.ts';
import { parseTimestampText } from '../iso-date-time.ts';
import { createPartitioner, type PartitionerSettings } from '../partitioner.ts';
import { PathFormatter } from '../path-format.ts';
import { defaultPartitioner, sinkRecord, T0 } from './fixtures.ts';

function partitioner(over: Partial<PartitionerSettings>, clock = new ManualClock(T0)) {
  return createPartitioner({ ...defaultPartitioner, ...over }, clock);
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

  it('Field names folders field=value as Confluent does: values unescaped, nulls as field=null', () => {
    // Confluent's FieldPartitionerTest expects `string=null` and unescaped values
    // (field-partitioner.test.ts has the full set of its cases).
    const p = partitioner({
      className: 'io.confluent.connect.storage.partitioner.FieldPartitioner',
      fieldNames: ['country', 'source.db'],
    });
    const record = sinkRecord('t', 0, 0, { country: 'a/b=c', source: { db: 'shop' } });
    expect(p.encodePartition(record)).toBe('country=a/b=c/source.db=shop');
    expect(p.encodePartition(sinkRecord('t', 0, 0, { country: null }))).toBe(
      'country=null/source.db=null',
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

  it('refuses by name custom partitioner and extractor classes and bad field names at validation', () => {
    const errors = (extra: Record<string, string>) => {
      const parsed = parseConfig(parquetSinkConfigDefs, {
        's3.bucket.name': 'b',
        'flush.size': '1',
        ...extra,
      });
      return [...parsed.errors, ...(parsed.errors.length ? [] : validateSinkConfig(parsed.values))];
    };
    expect(errors({ 'partitioner.class': 'com.example.RegionPartitioner' })).toEqual([
      expect.objectContaining({
        key: 'partitioner.class',
        message: expect.stringMatching(
          /^not supported: partitioner.class=com.example.RegionPartitioner/,
        ),
      }),
    ]);
    expect(
      errors({ 'partitioner.class': 'Daily', 'timestamp.extractor': 'com.example.MyExtractor' }),
    ).toEqual([expect.objectContaining({ key: 'timestamp.extractor' })]);
    expect(
      errors({ 'partitioner.class': 'FieldPartitioner', 'partition.field.name': 'a..b' }),
    ).toEqual([expect.objectContaining({ key: 'partition.field.name', value: 'a..b' })]);
    expect(
      errors({
        'partitioner.class': 'TimeBased',
        'path.format': 'YYYY/QQ',
        'partition.duration.ms': '1',
      }),
    ).toEqual([expect.objectContaining({ key: 'path.format' })]);
  });

  it("formats Confluent's documented path.format example", () => {
    // PartitionerConfig's path.format doc: 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH gives
    // the directories /year=2015/month=12/day=07/hour=15/.
    const p = partitioner({
      className: 'TimeBased',
      pathFormat: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
      durationMs: 3_600_000,
    });
    const at = Date.parse('2015-12-07T15:42:00Z');
    expect(p.encodePartition(sinkRecord('t', 0, 0, {}, { timestamp: at }))).toBe(
      'year=2015/month=12/day=07/hour=15',
    );
  });

  it('Daily and Hourly join their levels with directory.delim; a trailing delimiter of path.format is dropped', () => {
    const daily = partitioner({ className: 'DailyPartitioner', dirDelim: '|' });
    expect(daily.encodePartition(sinkRecord('t', 0, 0, {}))).toBe('year=2026|month=11|day=28');
    const hourly = partitioner({ className: 'Hourly', dirDelim: '_' });
    expect(hourly.encodePartition(sinkRecord('t', 0, 0, {}))).toBe(
      'year=2026_month=11_day=28_hour=22',
    );
    const trailing = partitioner({
      className: 'TimeBased',
      pathFormat: "'year'=YYYY/",
      durationMs: 86_400_000,
    });
    expect(trailing.encodePartition(sinkRecord('t', 0, 0, {}))).toBe('year=2026');
    for (const pathFormat of ['', ' ', '/']) {
      expect(() => partitioner({ className: 'TimeBased', pathFormat, durationMs: 1 })).toThrow(
        /needs path.format/,
      );
    }
  });

  it("RecordField reads a struct field by its schema type, as Confluent's extractor does", () => {
    const p = partitioner({
      className: 'Hourly',
      timestampExtractor: 'RecordField',
      timestampField: 'after.ts',
    });
    const at = Date.parse('2026-01-02T03:04:05Z');
    const of = (ts: ReturnType<typeof Schemas.int64>, value: unknown, offset = 0) =>
      sinkRecord(
        't',
        0,
        offset,
        { after: { ts: value } },
        { valueSchema: Schemas.struct([['after', Schemas.struct([['ts', ts]])]]) },
      );
    const hour = 'year=2026/month=01/day=02/hour=03';
    expect(p.encodePartition(of(Schemas.int64(), at))).toBe(hour);
    expect(p.encodePartition(of(Schemas.timestamp(), at))).toBe(hour);
    expect(p.encodePartition(of(Schemas.string(), String(at)))).toBe(hour); // digits: epoch ms
    expect(p.encodePartition(of(Schemas.string(), '2026-01-02T04:04:05+01:00'))).toBe(hour);
    // Another type, an unreadable text or a missing field fails the task in Confluent's sink.
    for (const [schema, value] of [
      [Schemas.float64(), 1.5],
      [Schemas.string(), 'yesterday'],
      [Schemas.int64({ optional: true }), null],
    ] as const) {
      expect(() => p.encodePartition(of(schema, value, 9))).toThrow(
        expect.objectContaining({ kind: 'connect', message: expect.stringMatching(/t-0@9/) }),
      );
    }
    // A tombstone (null value) is placed by its record timestamp.
    expect(p.recordTime(sinkRecord('t', 0, 0, null, { timestamp: at }))).toBe(at);
  });

  it('reads timestamp text as epoch digits or ISO-8601, as Joda-Time parses it', () => {
    const utc = (iso: string) => Date.parse(iso);
    const cases: Array<[string, number | undefined]> = [
      ['1700000000000', 1_700_000_000_000],
      ['-5', -5],
      ['2026', 2026], // digits are epoch ms before they are a year, as in Confluent's extractor
      ['+2026', utc('2026-01-01T00:00:00Z')],
      ['2026-03', utc('2026-03-01T00:00:00Z')],
      ['2026-03-04', utc('2026-03-04T00:00:00Z')],
      ['2026-032', utc('2026-02-01T00:00:00Z')],
      ['2026-03-04T05', utc('2026-03-04T05:00:00Z')],
      ['2026-03-04T05:06:07.891Z', utc('2026-03-04T05:06:07.891Z')],
      ['2026-03-04T05:06:07,5-02:30', utc('2026-03-04T07:36:07.500Z')],
      ['2026-03-04T05.5', utc('2026-03-04T05:30:00Z')],
      ['T10:15', utc('1970-01-01T10:15:00Z')],
      ['2026-02-30', undefined],
      ['2026-W05-3', undefined],
      ['04/03/2026', undefined],
      ['2026-03-04 05:06', undefined],
    ];
    for (const [text, expected] of cases)
      expect([text, parseTimestampText(text)]).toEqual([text, expected]);
  });
});
