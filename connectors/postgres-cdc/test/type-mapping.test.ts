import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonConverter } from '../../../src/connect/converters/json-converter.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { INT64_MAX, INT64_MIN } from '../src/int64.ts';
import {
  type DecimalHandlingMode,
  numericMapping,
  type TimePrecisionMode,
  UnrepresentableValueError,
} from '../src/type-mapping.ts';
import {
  ALL_TYPES_DDL,
  ALL_TYPES_NUMERIC_SPECIAL_ROWS,
  ALL_TYPES_ROW,
  ALL_TYPES_SMALL_NUMERIC_ROWS,
  ALL_TYPES_TEMPORAL_EDGE_ROWS,
} from './fixtures/all-types.ts';
import { type Capture, capture } from './support.ts';

const cluster = usePostgres();

describe('numeric special values per decimal.handling.mode (no database)', () => {
  const where = { table: { schema: 'shop', table: 'prices' }, column: 'amount' };
  /** numeric(10,2)'s typmod: (precision << 16 | scale) + 4. */
  const NUMERIC_10_2 = ((10 << 16) | 2) + 4;
  const NUMERIC_10_7 = ((10 << 16) | 7) + 4;
  const convert = (typmod: number, mode: DecimalHandlingMode, text: string) =>
    numericMapping(typmod, mode, where).fromText(text);

  it.each([
    ['NaN', Number.NaN, 'NAN'],
    ['Infinity', Infinity, 'POSITIVE_INFINITY'],
    ['-Infinity', -Infinity, 'NEGATIVE_INFINITY'],
  ])('sends %s as the double and the name Debezium sends', (text, double, name) => {
    for (const typmod of [-1, NUMERIC_10_2]) {
      expect(convert(typmod, 'double', text)).toBe(double);
      expect(convert(typmod, 'string', text)).toBe(name);
    }
  });

  it.each([
    ['unconstrained numeric (VariableScaleDecimal)', -1, 'Infinity'],
    ['numeric(10,2) (Decimal)', NUMERIC_10_2, 'NaN'],
  ])(
    'refuses a special value in precise mode for %s, naming where, what and the fix',
    (_type, typmod, text) => {
      let thrown: unknown;
      try {
        convert(typmod, 'precise', text);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(UnrepresentableValueError);
      const error = thrown as UnrepresentableValueError;
      expect(error.kind).toBe('connect');
      expect(error.message).toMatch(
        new RegExp(
          `^Table shop\\.prices, column amount: value '${text}' cannot be represented with decimal\\.handling\\.mode=precise`,
        ),
      );
      expect(error.message).toContain('Set decimal.handling.mode=string');
      expect(error.message).toContain('or decimal.handling.mode=double');
    },
  );

  it('leaves finite values as before in every mode', () => {
    expect(convert(NUMERIC_10_2, 'precise', '-0.50')).toEqual(Buffer.from('ce', 'hex'));
    expect(convert(-1, 'precise', '1.5')).toEqual({ scale: 1, value: Buffer.from('0f', 'hex') });
    expect(convert(-1, 'string', '-0.000100')).toBe('-0.000100');
    expect(convert(-1, 'double', '0.001')).toBe(0.001);
  });

  // Postgres writes numeric(p,s) values at scale s, so Debezium's setScale(s) changes
  // nothing and both kinds of column follow the same rule over the text's own scale.
  it.each([
    ['numeric(10,7)', '0.0000000', '0E-7', NUMERIC_10_7],
    ['numeric(10,7)', '0.0000001', '1E-7', NUMERIC_10_7],
    ['numeric(10,7)', '-0.0000010', '-0.0000010', NUMERIC_10_7],
    ['numeric(10,7)', '123.4500000', '123.4500000', NUMERIC_10_7],
    ['numeric(10,2)', '0.00', '0.00', NUMERIC_10_2],
    ['numeric(10,2)', '-99999999.99', '-99999999.99', NUMERIC_10_2],
    ['unconstrained numeric', '0', '0', -1],
    ['unconstrained numeric', '0.0000000', '0E-7', -1],
    ['unconstrained numeric', '0.0000001', '1E-7', -1],
    ['unconstrained numeric', '0.000000120', '1.20E-7', -1],
    ['unconstrained numeric', '-0.00000000000000000001', '-1E-20', -1],
    ['unconstrained numeric', '0.000001', '0.000001', -1],
    ['unconstrained numeric', `1${'0'.repeat(30)}`, `1${'0'.repeat(30)}`, -1],
  ])(
    'sends a finite %s value %s in string mode as BigDecimal.toString() writes it: %s',
    (_type, text, expected, typmod) => {
      expect(convert(typmod, 'string', text)).toBe(expected);
    },
  );
});

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
    return { afters, schemaOf, records: c.records };
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
      n: Buffer.from('b669fd2e', 'hex'),
      nv: { scale: 5, value: Buffer.from('01e240', 'hex') },
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
      na: [
        { scale: 1, value: Buffer.from('0f', 'hex') },
        null,
        { scale: 0, value: Buffer.from('ec', 'hex') },
      ],
      sn: Buffer.from('00e4e1c0', 'hex'),
      sna: [Buffer.from('2625a0', 'hex')],
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
    expect(schemaOf('na')).toMatchObject({
      type: 'array',
      valueSchema: { name: 'io.debezium.data.VariableScaleDecimal', optional: true },
    });
    expect(schemaOf('sn')).toMatchObject({
      name: 'org.apache.kafka.connect.data.Decimal',
      parameters: { scale: '7', 'connect.decimal.precision': '10' },
    });
    expect(schemaOf('sna')).toMatchObject({
      type: 'array',
      valueSchema: {
        name: 'org.apache.kafka.connect.data.Decimal',
        parameters: { scale: '7' },
        optional: true,
      },
    });
    expect(schemaOf('i2')).toMatchObject({ type: 'int16' });
    expect(schemaOf('f4')).toMatchObject({ type: 'float32' });
  });

  it('follows decimal.handling.mode double and string', async () => {
    expect((await captureRow({ decimalHandlingMode: 'double' })).after).toMatchObject({
      n: -12345678.9,
      nv: 1.23456,
      na: [1.5, null, -20],
      sn: 1.5,
      sna: [0.25],
    });
    expect((await captureRow({ decimalHandlingMode: 'string' })).after).toMatchObject({
      n: '-12345678.90',
      nv: '1.23456',
      na: ['1.5', null, '-20'],
      sn: '1.5000000',
      sna: ['0.2500000'],
    });
  });

  it("sends numerics below 1e-6 as Java's BigDecimal.toString() does with decimal.handling.mode=string, for numeric(p,s), numeric and their arrays", async () => {
    const { afters, records } = await captureRows(ALL_TYPES_SMALL_NUMERIC_ROWS, {
      decimalHandlingMode: 'string',
    });

    expect(afters.map(({ id, n, nv, na, sn, sna }) => ({ id, n, nv, na, sn, sna }))).toEqual([
      {
        id: 14,
        n: '0.00',
        nv: '1E-7',
        na: ['1.2E-7', '-1.00E-7', '0.000000', '0E-7', '0.0000012'],
        sn: '0E-7',
        sna: ['0E-7', '1E-7', '-12.5000000', null],
      },
      {
        id: 15,
        n: '0.01',
        nv: '-1.230E-30',
        na: ['0.000001', '100000000000000000000'],
        sn: '0.0000010',
        sna: ['-9E-7'],
      },
    ]);
    // JsonConverter writes them as the strings they are.
    const json = new JsonConverter();
    json.configure({ 'schemas.enable': false }, false);
    const text = String(
      json.fromConnectData(records[0].topic, records[0].valueSchema ?? null, records[0].value),
    );
    expect(text).toContain('"sn":"0E-7","sna":["0E-7","1E-7","-12.5000000",null]');
  });

  it.each<[DecimalHandlingMode, unknown[]]>([
    [
      'double',
      [
        [11, Number.NaN, Number.NaN, Number.NaN, Number.NaN, [Number.NaN, 1.5]],
        [12, Infinity, Infinity, null, Infinity, [Infinity, null]],
        [13, -Infinity, -Infinity, 0, -Infinity, [-Infinity]],
      ],
    ],
    [
      'string',
      [
        [11, Number.NaN, Number.NaN, 'NAN', 'NAN', ['NAN', '1.5']],
        [12, Infinity, Infinity, null, 'POSITIVE_INFINITY', ['POSITIVE_INFINITY', null]],
        [13, -Infinity, -Infinity, '0.00', 'NEGATIVE_INFINITY', ['NEGATIVE_INFINITY']],
      ],
    ],
  ])(
    "sends numeric NaN and infinities as Debezium does with decimal.handling.mode=%s, and floats' as floats",
    async (decimalHandlingMode, expected) => {
      const { afters } = await captureRows(ALL_TYPES_NUMERIC_SPECIAL_ROWS, {
        decimalHandlingMode,
      });
      expect(afters.map(({ id, f4, f8, n, nv, na }) => [id, f4, f8, n, nv, na])).toEqual(expected);
    },
  );

  it('writes them as JsonConverter does: non-finite doubles and floats as quoted Java names', async () => {
    const json = new JsonConverter();
    json.configure({ 'schemas.enable': false }, false);
    const payloads = async (decimalHandlingMode: DecimalHandlingMode) => {
      const { records } = await captureRows(ALL_TYPES_NUMERIC_SPECIAL_ROWS, {
        decimalHandlingMode,
      });
      return records.map((r) => {
        const text = String(json.fromConnectData(r.topic, r.valueSchema ?? null, r.value));
        return text.slice(text.indexOf('"after"'), text.indexOf(',"source"'));
      });
    };
    const doubles = await payloads('double');
    expect(doubles[0]).toContain('"f4":"NaN","f8":"NaN"');
    expect(doubles[0]).toContain('"n":"NaN","nv":"NaN"');
    expect(doubles[0]).toContain('"na":["NaN",1.5]');
    expect(doubles[1]).toContain('"f4":"Infinity","f8":"Infinity"');
    expect(doubles[1]).toContain('"nv":"Infinity"');
    expect(doubles[2]).toContain('"na":["-Infinity"]');
    const strings = await payloads('string');
    expect(strings[0]).toContain('"n":"NAN","nv":"NAN"');
    expect(strings[1]).toContain('"nv":"POSITIVE_INFINITY"');
    expect(strings[2]).toContain('"f4":"-Infinity","f8":"-Infinity"');
  });

  // The first change after a table's Relation message waits for the schema lookup in
  // the source's backlog; later ones are handled as they arrive. Both must fail alike.
  it.each([
    ['among the first changes of the table', 0],
    ['in a later transaction', 1],
  ])(
    'fails on them with decimal.handling.mode=precise, naming table, column, value and the fix, and lets no part of the transaction out (%s)',
    async (_case, before) => {
      const db = await cluster().freshDatabase('types');
      const sql: pg.Client = await cluster().client(db);
      open.push(() => sql.end());
      await sql.query(ALL_TYPES_DDL);
      const c = await capture(cluster().connectionConfig(db), ['all_types']);
      open.push(() => c.stop());
      if (before > 0) {
        await sql.query('INSERT INTO all_types (id, nv) VALUES (1, 2.5)');
        await c.transactionsDone(1);
      }
      // A good change first: it may have become a record, but the transaction must never
      // be reported complete (so it is never confirmed), nor anything after it.
      await sql.query(
        "BEGIN; INSERT INTO all_types (id, nv) VALUES (2, 1); INSERT INTO all_types (id, nv) VALUES (3, 'Infinity'); INSERT INTO all_types (id) VALUES (4); COMMIT",
      );
      await sql.query('INSERT INTO all_types (id) VALUES (5)');

      const failure = await c.transactionsDone(before + 2).then(
        () => null,
        (e: unknown) => e as Error,
      );

      expect(failure?.message).toBe(
        "Table public.all_types, column nv: value 'Infinity' cannot be represented with " +
          'decimal.handling.mode=precise: a Kafka Connect Decimal has no NaN or infinity. ' +
          'Set decimal.handling.mode=string (sends "NAN", "POSITIVE_INFINITY", "NEGATIVE_INFINITY", ' +
          'as Debezium does) or decimal.handling.mode=double (sends NaN and ±Infinity as doubles); ' +
          'either changes the column to a string or float64 field.',
      );
      expect(c.transactions).toHaveLength(before);
      expect(c.records.map((r) => (r.key as { id: number }).id)).not.toContain(4);
    },
  );

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
