/**
 * The mappings of issue #20's types, value by value, against Debezium's documented
 * representations (PostgresValueConverter and io.debezium.data.*), without a database:
 * every expected value here is written out by hand (bytes as hex, strings as Debezium
 * prints them), not computed by the code under test. The same mappings against real
 * Postgres text, snapshot and streaming: postgres-cdc-task-debezium-types.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Schemas } from '../../../src/connect/api/index.ts';
import type { MappingModes } from '../src/type-mapping.ts';
import { mapColumn, UnrepresentableValueError } from '../src/type-mapping.ts';
import type { PgType, TypeRegistry } from '../src/type-registry.ts';

const where = { table: { schema: 'shop', table: 'items' }, column: 'c' };

/** A registry of pg_catalog types by name, plus extension types in schema `ext`. */
function registryOf(types: Array<Partial<PgType> & { oid: number; name: string }>): TypeRegistry {
  const byOid = new Map<number, PgType>();
  for (const t of types)
    byOid.set(t.oid, {
      schema: 'pg_catalog',
      kind: 'b',
      elementOid: 0,
      baseOid: 0,
      baseTypmod: -1,
      isArray: false,
      enumLabels: null,
      delimiter: ',',
      ...t,
    });
  return { get: (oid: number) => byOid.get(oid) } as unknown as TypeRegistry;
}

const NAMES = [
  'money',
  'bit',
  'varbit',
  'bytea',
  'inet',
  'cidr',
  'macaddr',
  'macaddr8',
  'int4range',
  'int8range',
  'numrange',
  'tsrange',
  'tstzrange',
  'daterange',
  'tsvector',
  'point',
  'box',
  'lseg',
  'path',
  'polygon',
  'circle',
  'line',
  'interval',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'xml',
  'oid',
];
const EXTENSIONS = [
  'hstore',
  'ltree',
  'citext',
  'vector',
  'halfvec',
  'sparsevec',
  'geometry',
  'geography',
];
const registry = registryOf([
  ...NAMES.map((name, i) => ({ oid: 1000 + i, name })),
  ...NAMES.map((name, i) => ({
    oid: 2000 + i,
    name: `_${name}`,
    isArray: true,
    elementOid: 1000 + i,
  })),
  ...EXTENSIONS.map((name, i) => ({ oid: 3000 + i, name, schema: 'ext' })),
]);
// box arrays separate elements with ';' (box's typdelim).
const boxOid = 1000 + NAMES.indexOf('box');
(registry.get(boxOid) as PgType).delimiter = ';';

const base: MappingModes = { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' };
function mapping(name: string, typmod = -1, modes: Partial<MappingModes> = {}, array = false) {
  const i = NAMES.indexOf(name);
  const oid = i >= 0 ? (array ? 2000 : 1000) + i : 3000 + EXTENSIONS.indexOf(name);
  const m = mapColumn(registry, oid, typmod, { ...base, ...modes }, where);
  if (!m) throw new Error(`no mapping for ${name}`);
  return m;
}
const convert = (name: string, text: string, modes: Partial<MappingModes> = {}, typmod = -1) =>
  mapping(name, typmod, modes).fromText(text);
const hex = (h: string) => Buffer.from(h.replace(/\s/g, ''), 'hex');
const failure = (f: () => unknown): UnrepresentableValueError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UnrepresentableValueError);
    return e as UnrepresentableValueError;
  }
  throw new Error('did not throw');
};

describe('money (PostgresMoney, convertMoney)', () => {
  it('is a Decimal of scale money.fraction.digits (2 by default) in precise mode, rounded half up', () => {
    expect(mapping('money').schema).toEqual(
      Schemas.decimal(2, { parameters: { scale: '2' } as Record<string, string> }),
    );
    expect(mapping('money', -1, { moneyFractionDigits: 0 }).schema.parameters).toEqual({
      scale: '0',
    });
    // 123456789 = 0x075BCD15; -1250 = 0xFB1E.
    expect(convert('money', '$1,234,567.89')).toEqual(hex('075BCD15'));
    expect(convert('money', '-$12.50')).toEqual(hex('FB1E'));
    expect(convert('money', '($12.50)')).toEqual(hex('FB1E'));
    expect(convert('money', '$0.00')).toEqual(hex('00'));
    expect(convert('money', '$2.50', { moneyFractionDigits: 0 })).toEqual(hex('03'));
    expect(convert('money', '-$2.50', { moneyFractionDigits: 0 })).toEqual(hex('FD'));
    expect(convert('money', '$2.49', { moneyFractionDigits: 0 })).toEqual(hex('02'));
    expect(convert('money', '$7.25', { moneyFractionDigits: 4 })).toEqual(hex('011B34')); // 72500
  });

  it('is FLOAT64 with decimal.handling.mode=double and the plain decimal with string', () => {
    expect(mapping('money', -1, { decimalHandlingMode: 'double' }).schema.type).toBe('float64');
    expect(convert('money', '$1,234,567.89', { decimalHandlingMode: 'double' })).toBe(1234567.89);
    expect(convert('money', '-$12.50', { decimalHandlingMode: 'double' })).toBe(-12.5);
    expect(mapping('money', -1, { decimalHandlingMode: 'string' }).schema.type).toBe('string');
    expect(convert('money', '-$1,012.50', { decimalHandlingMode: 'string' })).toBe('-1012.50');
    expect(convert('money', '€5.10', { decimalHandlingMode: 'string' })).toBe('5.10');
    expect(convert('money', '5.10 EUR', { decimalHandlingMode: 'string' })).toBe('5.10');
    expect(convert('money', '$-5.10', { decimalHandlingMode: 'string' })).toBe('-5.10');
    expect(convert('money', '-$0.00', { decimalHandlingMode: 'string' })).toBe('0.00');
  });

  it('refuses text in a locale it cannot read for sure, naming table, column, value and lc_monetary', () => {
    for (const text of ['1.234,56 €', '12,5 €', '$1,23.00', 'lots']) {
      const error = failure(() => convert('money', text));
      expect(error.message).toMatch(
        new RegExp(
          `^Table shop\\.items, column c: value '${text.replace(/[$.]/g, '\\$&')}' is money`,
        ),
      );
      expect(error.message).toContain('lc_monetary');
      expect(error.message).toContain('column.exclude.list');
    }
  });
});

describe('bit and varbit (io.debezium.data.Bits)', () => {
  it('sends bit(1), bit and varbit(1) as BOOLEAN', () => {
    expect(mapping('bit', 1).schema.type).toBe('boolean');
    expect(convert('bit', '1', {}, 1)).toBe(true);
    expect(convert('bit', '0', {}, 1)).toBe(false);
    expect(convert('varbit', '1', {}, 1)).toBe(true);
    expect(failure(() => convert('varbit', '', {}, 1)).message).toContain('empty bit string');
  });

  it('sends bit(n) and varbit(n) as Bits with length n, little-endian bytes sized to the content', () => {
    expect(mapping('bit', 10).schema).toEqual({
      type: 'bytes',
      optional: false,
      name: 'io.debezium.data.Bits',
      version: 1,
      parameters: { length: '10' },
    });
    expect(mapping('varbit', -1).schema.parameters).toEqual({ length: '2147483647' });
    expect(convert('bit', '10110', {}, 5)).toEqual(hex('16')); // 22
    expect(convert('bit', '1000000001', {}, 10)).toEqual(hex('0102')); // 513, LSB first
    expect(convert('bit', '0000000000000001', {}, 16)).toEqual(hex('01'));
    expect(convert('varbit', '101', {}, 33)).toEqual(hex('05'));
    expect(convert('varbit', '000', {}, -1)).toEqual(Buffer.alloc(0));
  });
});

describe('bytea per binary.handling.mode', () => {
  it.each([
    ['bytes', 'bytes', hex('00ff10fb')],
    ['base64', 'string', 'AP8Q+w=='],
    ['base64-url-safe', 'string', 'AP8Q-w=='],
    ['hex', 'string', '00ff10fb'],
  ] as const)('%s', (mode, type, value) => {
    const m = mapping('bytea', -1, { binaryHandlingMode: mode });
    expect(m.schema.type).toBe(type);
    expect(m.fromText('\\x00ff10fb')).toEqual(value);
  });

  it('keeps padding and uses - and _ in base64-url-safe, as Base64.getUrlEncoder()', () => {
    expect(convert('bytea', '\\xffffff', { binaryHandlingMode: 'base64-url-safe' })).toBe('____');
    expect(convert('bytea', '\\xfbff', { binaryHandlingMode: 'base64-url-safe' })).toBe('-_8=');
  });
});

describe('strings: network addresses, ranges, tsvector, citext, ltree, xml, oid', () => {
  it.each([
    ['inet', '192.168.0.1/24'],
    ['cidr', '10.0.0.0/8'],
    ['macaddr', '08:00:2b:01:02:03'],
    ['macaddr8', '08:00:2b:01:02:03:04:05'],
    ['int4range', '[1,5)'],
    ['int8range', 'empty'],
    ['numrange', '(1.5,2.5]'],
    ['tsrange', '["2024-01-01 00:00:00","2024-02-01 00:00:00")'],
    ['tstzrange', '["2024-01-01 00:00:00+00",)'],
    ['daterange', '[2024-01-01,2024-02-01)'],
    ['citext', 'MiXeD'],
  ])('%s is a STRING of the text', (name, text) => {
    expect(mapping(name).schema).toEqual(Schemas.string());
    expect(convert(name, text)).toBe(text);
  });

  it('names tsvector, ltree and xml as Debezium does, and sends oid as INT64', () => {
    expect(mapping('tsvector').schema).toMatchObject({
      name: 'io.debezium.data.Tsvector',
      version: 1,
    });
    expect(mapping('ltree').schema).toMatchObject({ name: 'io.debezium.data.Ltree', version: 1 });
    expect(mapping('xml').schema).toMatchObject({ name: 'io.debezium.data.Xml', version: 1 });
    expect(mapping('oid').schema.type).toBe('int64');
    expect(convert('oid', '4294967295')).toBe(4294967295);
  });

  it('sends arrays of them as arrays of optional strings', () => {
    const m = mapping('inet', -1, {}, true);
    expect(m.schema).toEqual(Schemas.array(Schemas.string({ optional: true })));
    expect(m.fromText('{192.168.0.1,NULL,::1/128}')).toEqual(['192.168.0.1', null, '::1/128']);
    expect(mapping('int4range', -1, {}, true).fromText('{"[1,5)",empty}')).toEqual([
      '[1,5)',
      'empty',
    ]);
  });
});

describe('interval.handling.mode=string (io.debezium.time.Interval)', () => {
  it.each([
    ['P1Y2M3DT4H5M6.5S', 'P1Y2M3DT4H5M6.5S'],
    ['P-1DT-2H-3M-4.000005S', 'P0Y0M-1DT-2H-3M-4.000005S'],
    ['PT0S', 'P0Y0M0DT0H0M0S'],
    ['PT-0.5S', 'P0Y0M0DT0H0M-0.5S'],
    ['PT100H', 'P0Y0M0DT100H0M0S'],
    ['P-1Y-2M3D', 'P-1Y-2M3DT0H0M0S'],
    ['PT1.100000S', 'P0Y0M0DT0H0M1.1S'],
  ])('%s -> %s', (text, expected) => {
    const m = mapping('interval', -1, { intervalHandlingMode: 'string' });
    expect(m.schema).toMatchObject({
      type: 'string',
      name: 'io.debezium.time.Interval',
      version: 1,
    });
    expect(m.fromText(text)).toBe(expected);
  });

  it('stays MicroDuration with numeric', () => {
    expect(mapping('interval', -1, { intervalHandlingMode: 'numeric' }).schema.name).toBe(
      'io.debezium.time.MicroDuration',
    );
  });
});

describe('time.precision.mode isostring, microseconds, nanoseconds', () => {
  const iso = { timePrecisionMode: 'isostring' } as const;
  it('isostring: IsoDate, IsoTime, IsoTimestamp strings at UTC; timestamptz stays ZonedTimestamp', () => {
    expect(mapping('date', -1, iso).schema).toMatchObject({
      type: 'string',
      name: 'io.debezium.time.IsoDate',
    });
    expect(convert('date', '2024-02-29', iso)).toBe('2024-02-29Z');
    expect(convert('date', '0044-03-15 BC', iso)).toBe('-0043-03-15Z');
    expect(convert('date', 'infinity', iso)).toBe('-5877611-06-21Z');
    expect(mapping('time', 3, iso).schema.name).toBe('io.debezium.time.IsoTime');
    expect(convert('time', '13:14:15.123456', iso)).toBe('13:14:15.123456Z');
    expect(convert('time', '00:00:00.5', iso)).toBe('00:00:00.5Z');
    expect(convert('time', '24:00:00', iso)).toBe('00:00:00Z');
    expect(mapping('timestamp', 3, iso).schema.name).toBe('io.debezium.time.IsoTimestamp');
    expect(convert('timestamp', '2024-02-29 13:14:15.654321', iso)).toBe(
      '2024-02-29T13:14:15.654321Z',
    );
    expect(convert('timestamp', '12345-01-01 00:00:00', iso)).toBe('+12345-01-01T00:00:00Z');
    // pgjdbc's infinity sentinels taken as µs: Long.MAX_VALUE µs is
    // +294247-01-10T04:00:54.775807Z; 9223372036825200000 µs is 29.575807 s before it.
    expect(convert('timestamp', 'infinity', iso)).toBe('+294247-01-10T04:00:25.2Z');
    expect(mapping('timestamptz', -1, iso).schema.name).toBe('io.debezium.time.ZonedTimestamp');
  });

  it('microseconds: MicroTime and MicroTimestamp whatever the precision', () => {
    const m = { timePrecisionMode: 'microseconds' } as const;
    expect(mapping('time', 0, m).schema.name).toBe('io.debezium.time.MicroTime');
    expect(convert('time', '13:14:15', m, 0)).toBe((13 * 3600 + 14 * 60 + 15) * 1e6);
    expect(mapping('timestamp', 3, m).schema.name).toBe('io.debezium.time.MicroTimestamp');
    expect(convert('timestamp', '2024-02-29 13:14:15.5', m, 3)).toBe(1709212455_500000);
    expect(mapping('date', -1, m).schema.name).toBe('io.debezium.time.Date');
  });

  it('nanoseconds: NanoTime and NanoTimestamp, infinities at int64 ends, out-of-range values refused', () => {
    const m = { timePrecisionMode: 'nanoseconds' } as const;
    expect(mapping('time', -1, m).schema).toMatchObject({
      type: 'int64',
      name: 'io.debezium.time.NanoTime',
    });
    expect(convert('time', '13:14:15.123456', m)).toBe(47655123456000);
    expect(mapping('timestamp', -1, m).schema).toMatchObject({
      type: 'int64',
      name: 'io.debezium.time.NanoTimestamp',
    });
    expect(convert('timestamp', '2024-02-29 13:14:15.654321', m)).toBe(1709212455654321000n);
    expect(convert('timestamp', 'infinity', m)).toBe(9223372036854775807n);
    expect(convert('timestamp', '-infinity', m)).toBe(-9223372036854775808n);
    // int64's least ns is 1677-09-21T00:12:43.145224192Z.
    expect(convert('timestamp', '1677-09-21 00:12:43.145225', m)).toBe(-9223372036854775000n);
    const error = failure(() => convert('timestamp', '1677-09-21 00:12:43.145224', m));
    expect(error.message).toContain("value '1677-09-21 00:12:43.145224'");
    expect(error.message).toContain('time.precision.mode=microseconds or isostring');
    failure(() => convert('timestamp', '9999-12-31 00:00:00', m));
  });
});

describe('hstore (hstore.handling.mode json | map)', () => {
  it('json: io.debezium.data.Json, keys in java.util.HashMap order, NULL as null', () => {
    expect(mapping('hstore').schema).toMatchObject({
      type: 'string',
      name: 'io.debezium.data.Json',
    });
    // "a".hashCode() = 97 (bucket 1 of 16), "zz".hashCode() = 3904 (bucket 0): HashMap
    // iterates "zz" first, whatever order Postgres writes them in.
    expect(convert('hstore', '"a"=>"1", "zz"=>NULL')).toBe('{"zz":null,"a":"1"}');
    expect(convert('hstore', '"k \\"q\\""=>"back\\\\slash é"')).toBe(
      '{"k \\"q\\"":"back\\\\slash é"}',
    );
    expect(convert('hstore', '')).toBe('{}');
  });

  it('map: MAP<STRING, optional STRING>', () => {
    const m = mapping('hstore', -1, { hstoreHandlingMode: 'map' });
    expect(m.schema).toEqual(Schemas.map(Schemas.string(), Schemas.string({ optional: true })));
    expect(m.fromText('"a"=>"1", "zz"=>NULL')).toEqual(
      new Map<string, string | null>([
        ['zz', null],
        ['a', '1'],
      ]),
    );
  });
});

describe('pgvector (DoubleVector, FloatVector, SparseDoubleVector)', () => {
  it('maps vector, halfvec and sparsevec', () => {
    expect(mapping('vector').schema).toEqual({
      type: 'array',
      optional: false,
      name: 'io.debezium.data.DoubleVector',
      version: 1,
      valueSchema: Schemas.float64(),
    });
    expect(convert('vector', '[1,2.5,-3]')).toEqual([1, 2.5, -3]);
    expect(mapping('halfvec').schema).toMatchObject({
      name: 'io.debezium.data.FloatVector',
      valueSchema: { type: 'float32' },
    });
    // 0.1 as a float32 is 0.100000001490116119384765625.
    expect(convert('halfvec', '[0.1,2]')).toEqual([0.10000000149011612, 2]);
    expect(mapping('sparsevec').schema).toMatchObject({
      type: 'struct',
      name: 'io.debezium.data.SparseDoubleVector',
      fields: [
        { name: 'dimensions', schema: { type: 'int16' } },
        {
          name: 'vector',
          schema: { type: 'map', keySchema: { type: 'int16' }, valueSchema: { type: 'float64' } },
        },
      ],
    });
    expect(convert('sparsevec', '{1:0.5,3:2}/5')).toEqual({
      dimensions: 5,
      vector: new Map([
        [1, 0.5],
        [3, 2],
      ]),
    });
    expect(convert('sparsevec', '{}/3')).toEqual({ dimensions: 3, vector: new Map() });
    expect(failure(() => convert('vector', 'oops')).message).toContain('pgvector vector');
  });
});

/** Little-endian float64 bytes as hex, for the WKB below. */
const f64 = (x: number) => {
  const b = Buffer.alloc(8);
  new DataView(b.buffer, b.byteOffset).setFloat64(0, x, true);
  return b.toString('hex');
};
const u32 = (n: number) =>
  [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24]
    .map((x) => x.toString(16).padStart(2, '0'))
    .join('');

describe('geometric types (Point, Geometry, Circle, Line)', () => {
  it('point: Point {x, y, wkb, srid}', () => {
    expect(mapping('point').schema).toMatchObject({
      type: 'struct',
      name: 'io.debezium.data.geometry.Point',
      version: 1,
      fields: [
        { name: 'x', schema: { type: 'float64', optional: false } },
        { name: 'y', schema: { type: 'float64', optional: false } },
        { name: 'wkb', schema: { type: 'bytes', optional: true } },
        { name: 'srid', schema: { type: 'int32', optional: true } },
      ],
    });
    // 1.5 = 0x3FF8000000000000, 2.25 = 0x4002000000000000, little endian after '01 01000000'.
    expect(convert('point', '(1.5,2.25)')).toEqual({
      x: 1.5,
      y: 2.25,
      wkb: hex('01 01000000 000000000000F83F 0000000000000240'),
      srid: null,
    });
  });

  it('box, lseg, path and polygon: Geometry v2 with WKB and extensions', () => {
    expect(mapping('box').schema).toMatchObject({
      name: 'io.debezium.data.geometry.Geometry',
      version: 2,
      fields: [{ name: 'wkb' }, { name: 'srid' }, { name: 'extensions', schema: { type: 'map' } }],
    });
    const ring = (pts: number[][]) =>
      u32(pts.length) + pts.map(([x, y]) => f64(x) + f64(y)).join('');
    expect(convert('box', '(1,1),(0,0)')).toEqual({
      wkb: hex(
        `01${u32(3)}${u32(1)}${ring([
          [1, 1],
          [1, 0],
          [0, 0],
          [0, 1],
          [1, 1],
        ])}`,
      ),
      srid: null,
      extensions: new Map([['type', 'box']]),
    });
    expect(convert('lseg', '[(0,0),(1,-2.5)]')).toEqual({
      wkb: hex(
        `01${u32(2)}${ring([
          [0, 0],
          [1, -2.5],
        ])}`,
      ),
      srid: null,
      extensions: new Map([['type', 'lseg']]),
    });
    expect(convert('path', '[(0,0),(1,1)]')).toMatchObject({
      wkb: hex(
        `01${u32(2)}${ring([
          [0, 0],
          [1, 1],
        ])}`,
      ),
      extensions: new Map([
        ['type', 'path'],
        ['closed', 'false'],
      ]),
    });
    expect(convert('path', '((0,0),(1,1),(2,0))')).toMatchObject({
      wkb: hex(
        `01${u32(2)}${ring([
          [0, 0],
          [1, 1],
          [2, 0],
        ])}`,
      ),
      extensions: new Map([
        ['type', 'path'],
        ['closed', 'true'],
      ]),
    });
    expect(convert('polygon', '((0,0),(1,1),(1,0))')).toEqual({
      wkb: hex(
        `01${u32(3)}${u32(1)}${ring([
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 0],
        ])}`,
      ),
      srid: null,
      extensions: new Map([['type', 'polygon']]),
    });
  });

  it('circle and line', () => {
    expect(mapping('circle').schema).toMatchObject({
      name: 'io.debezium.data.geometry.Circle',
      fields: [
        { name: 'center', schema: { name: 'io.debezium.data.geometry.Point' } },
        { name: 'radius' },
      ],
    });
    expect(convert('circle', '<(1,2),3>')).toEqual({
      center: { x: 1, y: 2, wkb: hex(`0101000000${f64(1)}${f64(2)}`), srid: null },
      radius: 3,
    });
    expect(mapping('line').schema).toMatchObject({ name: 'io.debezium.data.geometry.Line' });
    expect(convert('line', '{1,-1,0.5}')).toEqual({ a: 1, b: -1, c: 0.5 });
  });

  it("reads box arrays, whose elements Postgres separates with ';'", () => {
    const values = mapping('box', -1, {}, true).fromText('{(1,1),(0,0);(2,2),(1,1)}') as unknown[];
    expect(values).toHaveLength(2);
    expect(mapping('point', -1, {}, true).fromText('{"(1,2)",NULL}')).toEqual([
      { x: 1, y: 2, wkb: hex(`0101000000${f64(1)}${f64(2)}`), srid: null },
      null,
    ]);
  });
});

describe('PostGIS geometry and geography (hex EWKB)', () => {
  it('sends the EWKB bytes and the SRID of its header', () => {
    // SELECT 'SRID=4326;POINT(1 2)'::geometry: type 0x20000001 (SRID flag), SRID 4326 = 0x10E6.
    const ewkb = '0101000020E6100000000000000000F03F0000000000000040';
    expect(convert('geometry', ewkb)).toEqual({ wkb: hex(ewkb), srid: 4326, extensions: null });
    expect(convert('geography', ewkb)).toEqual({ wkb: hex(ewkb), srid: 4326 });
    const plain = '0101000000000000000000F03F0000000000000040';
    expect(convert('geometry', plain)).toEqual({ wkb: hex(plain), srid: null, extensions: null });
    expect(mapping('geography').schema).toMatchObject({
      name: 'io.debezium.data.geometry.Geography',
      version: 1,
    });
    expect(failure(() => convert('geometry', 'POINT(1 2)')).message).toContain('PostGIS geometry');
  });
});
