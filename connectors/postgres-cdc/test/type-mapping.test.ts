import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { INT64_MAX, INT64_MIN } from '../src/int64.ts';
import { bigIntBytes } from '../src/text-values.ts';
import type { TimePrecisionMode } from '../src/type-mapping.ts';
import {
  ALL_TYPES_DDL,
  ALL_TYPES_ROW,
  ALL_TYPES_TEMPORAL_EDGE_ROWS,
} from './fixtures/all-types.ts';
import { type Capture, capture } from './support.ts';

const cluster = usePostgres();

describe('type mapping from pgoutput text (real Postgres)', () => {
  const open: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const f of open.splice(0).reverse()) await f().catch(() => undefined);
  });

  /** The `after` of every row `rows` inserts (one transaction), streamed with `opts`. */
  async function captureRows(rows: string, opts: Parameters<typeof capture>[2] = {}) {
    const db = await cluster().freshDatabase('types');
    const sql: pg.Client = await cluster().client(db);
    open.push(() => sql.end());
    await sql.query(ALL_TYPES_DDL);
    const c: Capture = await capture(cluster().connectionConfig(db), ['all_types'], opts);
    open.push(() => c.stop());
    await sql.query(`BEGIN; ${rows}; COMMIT`);
    await c.transactionsDone(1);
    const afters = c.records.map((r) => (r.value as { after: Record<string, unknown> }).after);
    const r = c.records[0];
    const schemaOf = (name: string) =>
      r.valueSchema?.fields?.[1].schema.fields?.find((f) => f.name === name)?.schema;
    return { afters, schemaOf };
  }

  async function captureRow(opts: Parameters<typeof capture>[2] = {}) {
    const { afters, schemaOf } = await captureRows(ALL_TYPES_ROW, opts);
    return { after: afters[0], schemaOf };
  }

  it('maps every supported type as Debezium does in adaptive mode with precise decimals', async () => {
    const { after, schemaOf } = await captureRow();
    expect(after).toEqual({
      id: 1,
      i2: -32768,
      i8: 9007199254740991,
      big: 9223372036854775807n,
      f4: 1.5,
      f8: -2.25e-10,
      b: true,
      t: 'héllo',
      vc: 'short',
      ch: 'ab ',
      by: Buffer.from([0, 255, 16]),
      n: bigIntBytes(-1234567890n),
      nv: { scale: 5, value: bigIntBytes(123456n) },
      d: 19782,
      tm: (13 * 3600 + 14 * 60 + 15) * 1_000_000 + 123456,
      tm3: (13 * 3600 + 14 * 60 + 15) * 1000 + 123,
      tz: '08:00:00Z',
      ts: Date.UTC(2024, 1, 29, 13, 14, 15) * 1000 + 654321,
      ts3: -500,
      tstz: '2024-02-29T12:14:15.5Z',
      iv:
        Math.trunc((14 * 30.4375 + 3) * 86_400_000_000) +
        (4 * 3600 + 5 * 60 + 6) * 1_000_000 +
        500_000,
      u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      j: '{"a": [1, 2]}',
      jb: '{"b": null}',
      arr: [1, null, 3],
      tarr: ['x y', 'q"z'],
      e: 'happy',
      dom: 5,
    });
    expect(schemaOf('n')).toMatchObject({
      type: 'bytes',
      name: 'org.apache.kafka.connect.data.Decimal',
      parameters: { scale: '2', 'connect.decimal.precision': '10' },
    });
    expect(schemaOf('nv')).toMatchObject({
      type: 'struct',
      name: 'io.debezium.data.VariableScaleDecimal',
    });
    expect(schemaOf('d')).toMatchObject({ type: 'int32', name: 'io.debezium.time.Date' });
    expect(schemaOf('tm')).toMatchObject({ type: 'int64', name: 'io.debezium.time.MicroTime' });
    expect(schemaOf('tm3')).toMatchObject({ type: 'int32', name: 'io.debezium.time.Time' });
    expect(schemaOf('tz')).toMatchObject({ type: 'string', name: 'io.debezium.time.ZonedTime' });
    expect(schemaOf('ts')).toMatchObject({
      type: 'int64',
      name: 'io.debezium.time.MicroTimestamp',
    });
    expect(schemaOf('ts3')).toMatchObject({ type: 'int64', name: 'io.debezium.time.Timestamp' });
    expect(schemaOf('tstz')).toMatchObject({
      type: 'string',
      name: 'io.debezium.time.ZonedTimestamp',
    });
    expect(schemaOf('iv')).toMatchObject({ type: 'int64', name: 'io.debezium.time.MicroDuration' });
    expect(schemaOf('u')).toMatchObject({ type: 'string', name: 'io.debezium.data.Uuid' });
    expect(schemaOf('jb')).toMatchObject({ type: 'string', name: 'io.debezium.data.Json' });
    expect(schemaOf('arr')).toMatchObject({
      type: 'array',
      valueSchema: { type: 'int32', optional: true },
    });
    expect(schemaOf('e')).toMatchObject({
      type: 'string',
      name: 'io.debezium.data.Enum',
      parameters: { allowed: 'sad,ok,happy' },
    });
    expect(schemaOf('dom')).toMatchObject({ type: 'int32', optional: true });
    expect(schemaOf('i2')).toMatchObject({ type: 'int16' });
    expect(schemaOf('f4')).toMatchObject({ type: 'float32' });
  });

  it('follows decimal.handling.mode double and string', async () => {
    expect((await captureRow({ decimalHandlingMode: 'double' })).after).toMatchObject({
      n: -12345678.9,
      nv: 1.23456,
    });
    expect((await captureRow({ decimalHandlingMode: 'string' })).after).toMatchObject({
      n: '-12345678.90',
      nv: '1.23456',
    });
  });

  it('follows time.precision.mode connect and adaptive_time_microseconds', async () => {
    const connect = await captureRow({ timePrecisionMode: 'connect' });
    expect(connect.after).toMatchObject({
      d: 19782,
      tm: (13 * 3600 + 14 * 60 + 15) * 1000 + 123,
      ts: Date.UTC(2024, 1, 29, 13, 14, 15, 654),
    });
    expect(connect.schemaOf('ts')).toMatchObject({
      name: 'org.apache.kafka.connect.data.Timestamp',
    });
    expect(connect.schemaOf('d')).toMatchObject({ name: 'org.apache.kafka.connect.data.Date' });
    const micro = await captureRow({ timePrecisionMode: 'adaptive_time_microseconds' });
    expect(micro.after).toMatchObject({ tm3: (13 * 3600 + 14 * 60 + 15) * 1_000_000 + 123_000 });
    expect(micro.schemaOf('tm3')).toMatchObject({ name: 'io.debezium.time.MicroTime' });
  });

  it.each<TimePrecisionMode>(['adaptive', 'adaptive_time_microseconds', 'connect'])(
    "gives infinities Debezium's values and the ends of Postgres' ranges exactly (%s)",
    async (timePrecisionMode) => {
      const { afters } = await captureRows(ALL_TYPES_TEMPORAL_EDGE_ROWS, { timePrecisionMode });
      const temporal = afters.map(({ id, d, ts, ts3, tstz, iv }) => ({ id, d, ts, ts3, tstz, iv }));
      // ts (precision 6) is MicroTimestamp µs, but Connect's Timestamp ms in connect mode;
      // ts3 is ms in every mode.
      const micros = timePrecisionMode !== 'connect';
      expect(temporal).toEqual([
        {
          id: 6,
          d: -2_147_472_692,
          ts: micros ? 9_223_372_036_825_200_000n : 9_223_372_036_825_200n,
          ts3: 9_223_372_036_825_200n,
          tstz: 'infinity',
          iv: INT64_MAX,
        },
        {
          id: 7,
          d: -2_147_472_691,
          ts: micros ? -9_223_372_036_832_400_000n : -9_223_372_036_832_400n,
          ts3: -9_223_372_036_832_400n,
          tstz: '-infinity',
          iv: INT64_MIN,
        },
        {
          id: 8,
          d: 2_145_042_905,
          // Past int64 in µs: saturated.
          ts: micros ? INT64_MAX : 9_224_318_015_999_999n,
          ts3: 9_224_318_015_999_999n,
          tstz: '+294276-12-31T23:59:59.999999Z',
          iv: INT64_MAX,
        },
        {
          id: 9,
          d: -2_440_588,
          ts: micros ? -210_866_803_200_000_000n : -210_866_803_200_000,
          ts3: -210_866_803_199_999,
          tstz: '-4713-11-24T00:00:00Z',
          iv: INT64_MIN,
        },
        {
          id: 10,
          d: 100_000_001,
          ts: micros ? 9_007_199_254_740_992n : 9_007_199_254_740,
          ts3: -9_007_199_254_741,
          tstz: '+275760-09-13T00:00:00.000001Z',
          iv: 9_467_280_000_000_000n,
        },
      ]);
    },
  );
});
