import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DataException,
  LogicalType,
  type Schema,
  Schemas,
} from '../../../../src/connect/api/index.ts';
import { JsonConverter } from '../../../../src/connect/converters/json-converter.ts';

// Expected bytes are written by hand from Kafka's JsonConverter (Jackson) output:
// compact JSON, schema keys in the order type, fields|items|keys,values, optional,
// name, version, doc, parameters, default, and "field" last in a struct field.

function converter(config: Record<string, string> = {}): JsonConverter {
  const c = new JsonConverter();
  c.configure(config, false);
  return c;
}

function text(buf: Buffer | null): string | null {
  return buf === null ? null : buf.toString('utf8');
}

const item = Schemas.struct(
  [
    ['id', Schemas.int64()],
    ['name', Schemas.string({ optional: true })],
    ['price', Schemas.decimal(2)],
    ['at', Schemas.timestamp()],
  ],
  { name: 'shop.item', version: 1 },
);

describe('JsonConverter with schemas.enable=true', () => {
  it('writes a primitive in the schema/payload envelope', () => {
    expect(text(converter().fromConnectData('t', Schemas.int32(), 12))).toBe(
      '{"schema":{"type":"int32","optional":false},"payload":12}',
    );
  });

  it('writes a struct with logical types and an int64 beyond 2^53 exactly', () => {
    const value = {
      id: 9007199254740993n,
      name: null,
      price: Uint8Array.from([0x00, 0x9c]),
      at: 1700000000000,
    };
    expect(text(converter().fromConnectData('t', item, value))).toBe(
      '{"schema":{"type":"struct","fields":[' +
        '{"type":"int64","optional":false,"field":"id"},' +
        '{"type":"string","optional":true,"field":"name"},' +
        '{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"price"},' +
        '{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"at"}' +
        '],"optional":false,"name":"shop.item","version":1},' +
        '"payload":{"id":9007199254740993,"name":null,"price":"AJw=","at":1700000000000}}',
    );
  });

  it('names float32 "float" and float64 "double" and prints them as Java does', () => {
    const schema = Schemas.struct([
      ['f', Schemas.float32()],
      ['d', Schemas.float64()],
    ]);
    const c = converter({ 'schemas.enable': 'false' });
    const cases: Array<[number, number, string]> = [
      [12.34, 1, '{"f":12.34,"d":1.0}'],
      [0.1, 1e7, '{"f":0.1,"d":1.0E7}'],
      [1e10, 1.5e-4, '{"f":1.0E10,"d":1.5E-4}'],
      [-0, 0.001, '{"f":-0.0,"d":0.001}'],
      [3.4028234663852886e38, 123456789, '{"f":3.4028235E38,"d":1.23456789E8}'],
      [1, 9999999, '{"f":1.0,"d":9999999.0}'],
      [1, 1.7976931348623157e308, '{"f":1.0,"d":1.7976931348623157E308}'],
      [1, Number.NaN, '{"f":1.0,"d":"NaN"}'],
      [1.401298464324817e-45, 5e-324, '{"f":1.4E-45,"d":4.9E-324}'],
      [2e-3, 1e23, '{"f":0.002,"d":1.0E23}'],
    ];
    for (const [f, d, expected] of cases) {
      expect(text(c.fromConnectData('t', schema, { f, d }))).toBe(expected);
    }
    expect(text(converter().fromConnectData('t', schema, { f: 1, d: 2 }))).toContain(
      '{"type":"float","optional":false,"field":"f"},{"type":"double","optional":false,"field":"d"}',
    );
  });

  it('writes arrays with "items" and maps with "keys"/"values"', () => {
    const c = converter();
    expect(text(c.fromConnectData('t', Schemas.array(Schemas.int32()), [1, 2, 3]))).toBe(
      '{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}',
    );
    const stringKeys = Schemas.map(Schemas.string(), Schemas.int32());
    expect(text(c.fromConnectData('t', stringKeys, new Map([['key1', 12]])))).toBe(
      '{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":{"key1":12}}',
    );
    const intKeys = Schemas.map(Schemas.int32(), Schemas.int32());
    expect(
      text(
        converter({ 'schemas.enable': 'false' }).fromConnectData(
          't',
          intKeys,
          new Map([
            [1, 12],
            [2, 15],
          ]),
        ),
      ),
    ).toBe('[[1,12],[2,15]]');
  });

  it('writes doc, parameters and a default as Kafka does', () => {
    const schema = Schemas.boolean({
      name: 'bool',
      version: 3,
      doc: 'the documentation',
      parameters: { foo: 'bar' },
      defaultValue: true,
    });
    expect(text(converter().fromConnectData('t', schema, false))).toBe(
      '{"schema":{"type":"boolean","optional":false,"name":"bool","version":3,"doc":"the documentation","parameters":{"foo":"bar"},"default":true},"payload":false}',
    );
  });

  it('writes Date and Time as int32 and bytes as base64', () => {
    const schema = Schemas.struct([
      ['day', Schemas.date()],
      ['tod', Schemas.time()],
      ['raw', Schemas.bytes()],
    ]);
    const c = converter({ 'schemas.enable': 'false' });
    expect(
      text(
        c.fromConnectData('t', schema, {
          day: 10000,
          tod: 14400000,
          raw: Buffer.from('test-string'),
        }),
      ),
    ).toBe('{"day":10000,"tod":14400000,"raw":"dGVzdC1zdHJpbmc="}');
  });

  it('writes decimals as JSON numbers with decimal.format=NUMERIC, as BigDecimal.toString does', () => {
    const c = converter({ 'schemas.enable': 'false', 'decimal.format': 'NUMERIC' });
    const cases: Array<[number[], number, string]> = [
      [[0x00, 0x9c], 2, '1.56'],
      [[0xcf, 0xc7], 2, '-123.45'],
      [[0x00], 2, '0.00'],
      [[0x01], 7, '1E-7'],
      [[0x01], 6, '0.000001'],
      [[0x7b], 0, '123'],
    ];
    for (const [bytes, scale, expected] of cases) {
      expect(text(c.fromConnectData('t', Schemas.decimal(scale), Uint8Array.from(bytes)))).toBe(
        expected,
      );
    }
  });

  it('escapes strings as Jackson does (control characters in upper-case hex, UTF-8 raw)', () => {
    const c = converter({ 'schemas.enable': 'false' });
    expect(text(c.fromConnectData('t', Schemas.string(), 'a"b\\c\n\u001fé\\u001f'))).toBe(
      '"a\\"b\\\\c\\n\\u001Fé\\\\u001f"',
    );
  });

  it('gives null bytes for a null value without schema, and the envelope for an optional one', () => {
    const c = converter();
    expect(c.fromConnectData('t', null, null)).toBeNull();
    expect(text(c.fromConnectData('t', Schemas.string({ optional: true }), null))).toBe(
      '{"schema":{"type":"string","optional":true},"payload":null}',
    );
    expect(text(c.fromConnectData('t', null, { a: 1 }))).toBe('{"schema":null,"payload":{"a":1}}');
  });

  it('replaces a null with the schema default unless replace.null.with.default=false', () => {
    const schema = Schemas.struct([['n', Schemas.int32({ optional: true, defaultValue: 5 })]]);
    const off = { 'schemas.enable': 'false', 'replace.null.with.default': 'false' };
    expect(
      text(converter({ 'schemas.enable': 'false' }).fromConnectData('t', schema, { n: null })),
    ).toBe('{"n":5}');
    expect(text(converter(off).fromConnectData('t', schema, { n: null }))).toBe('{"n":null}');
  });

  it('refuses a null for a required field without default, and a value of the wrong type', () => {
    const c = converter();
    expect(() => c.fromConnectData('t', Schemas.int32(), null)).toThrow(DataException);
    expect(() => c.fromConnectData('t', item, { id: 'x' })).toThrow(/Invalid type for int64/);
    expect(() => c.fromConnectData('t', Schemas.int8(), 128)).toThrow(/Invalid type for int8/);
    expect(() => c.fromConnectData('t', Schemas.int32(), 2 ** 31)).toThrow(DataException);
    expect(text(c.fromConnectData('t', Schemas.int16(), -32768))).toContain('"payload":-32768');
  });
});

describe('JsonConverter reading', () => {
  const bytes = (s: string) => Buffer.from(s, 'utf8');

  it("reads Kafka's own test messages (with spaces) into schema and value", () => {
    const c = converter();
    expect(
      c.toConnectData('t', bytes('{ "schema": { "type": "int64" }, "payload": 4398046511104 }')),
    ).toEqual({ schema: Schemas.int64(), value: 4398046511104 });
    const read = c.toConnectData(
      't',
      bytes(
        '{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" }, { "field": "field2", "type": "string" }] }, "payload": { "field1": true, "field2": "string" } }',
      ),
    );
    expect(read.value).toEqual({ field1: true, field2: 'string' });
    expect(read.schema?.fields?.map((f) => [f.name, f.schema.type])).toEqual([
      ['field1', 'boolean'],
      ['field2', 'string'],
    ]);
  });

  it('reads int64 beyond 2^53 and long decimals exactly', () => {
    const c = converter();
    const schema =
      '{"type":"struct","fields":[{"type":"int64","optional":false,"field":"big"},{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"amount"}],"optional":false}';
    const read = c.toConnectData(
      't',
      bytes(
        `{"schema":${schema},"payload":{"big":9223372036854775807,"amount":123456789012345678.91}}`,
      ),
    );
    const value = read.value as { big: bigint; amount: Uint8Array };
    expect(value.big).toBe(9223372036854775807n);
    const numeric = converter({ 'schemas.enable': 'false', 'decimal.format': 'NUMERIC' });
    expect(text(numeric.fromConnectData('t', read.schema!.fields![1].schema, value.amount))).toBe(
      '123456789012345678.91',
    );
  });

  it('gives null schema and value for a tombstone and for a null envelope', () => {
    const c = converter();
    expect(c.toConnectData('t', null)).toEqual({ schema: null, value: null });
    expect(c.toConnectData('t', bytes('{"schema":null,"payload":null}'))).toEqual({
      schema: null,
      value: null,
    });
  });

  it('fills a missing optional field with its default', () => {
    const read = converter().toConnectData(
      't',
      bytes(
        '{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":7,"field":"n"}],"optional":false},"payload":{}}',
      ),
    );
    expect(read.value).toEqual({ n: 7 });
    expect(read.schema?.fields?.[0].schema.defaultValue).toBe(7);
  });

  it('explains how to read plain JSON when the envelope is missing', () => {
    expect(() => converter().toConnectData('t', bytes('{"a":1}'))).toThrow(
      /set schemas.enable=false/,
    );
    expect(converter({ 'schemas.enable': 'false' }).toConnectData('t', bytes('{"a":1}'))).toEqual({
      schema: null,
      value: { a: 1 },
    });
  });

  it('reads schemaless integers beyond 2^53 as bigint', () => {
    const c = converter({ 'schemas.enable': 'false' });
    expect(c.toConnectData('t', bytes('[1, 12345678901234567890, 0.5]')).value).toEqual([
      1,
      12345678901234567890n,
      0.5,
    ]);
  });

  it('reads its own compact envelopes even when schema strings hold braces, quotes or a payload key', () => {
    const c = converter();
    const schema = Schemas.struct([['a', Schemas.string({ doc: 'x},"payload":{"\\' })]], {
      name: 'odd{[',
    });
    const bytes = c.fromConnectData('t', schema, { a: '}]"' });
    expect(c.toConnectData('t', bytes)).toEqual({ schema, value: { a: '}]"' } });
    expect(c.toConnectData('t', c.fromConnectData('t', null, [1]))).toEqual({
      schema: null,
      value: [1],
    });
  });

  it('refuses invalid JSON with a DataException', () => {
    expect(() => converter().toConnectData('t', bytes('{"schema":'))).toThrow(DataException);
  });
});

describe('JsonConverter round trip', () => {
  const schema: Schema = Schemas.struct([
    ['i8', Schemas.int8()],
    ['i32', Schemas.int32({ optional: true })],
    ['i64', Schemas.int64()],
    ['f64', Schemas.float64()],
    ['s', Schemas.string()],
    ['b', Schemas.bytes()],
    ['tags', Schemas.array(Schemas.string())],
    ['price', Schemas.decimal(3)],
    ['ts', { ...Schemas.int64(), name: LogicalType.Timestamp, version: 1 }],
  ]);
  const arbitraryValue = fc.record({
    i8: fc.integer({ min: -128, max: 127 }),
    i32: fc.option(fc.integer(), { nil: null }),
    i64: fc
      .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
      .map((n) =>
        n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)
          ? Number(n)
          : n,
      ),
    f64: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)),
    s: fc.string({ unit: 'grapheme' }),
    b: fc.uint8Array().map((a) => Buffer.from(a)),
    tags: fc.array(fc.string()),
    price: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    ts: fc.integer({ min: 0, max: 2 ** 42 }),
  });

  for (const format of ['BASE64', 'NUMERIC']) {
    it(`reads back what it wrote (decimal.format=${format})`, async () => {
      const { unscaledToBytes } = await import('../../../../src/connect/api/index.ts');
      const c = converter({ 'decimal.format': format });
      fc.assert(
        fc.property(arbitraryValue, (v) => {
          const value = { ...v, price: Buffer.from(unscaledToBytes(v.price)) };
          const read = c.toConnectData('t', c.fromConnectData('t', schema, value));
          expect(read.value).toEqual(value);
          expect(read.schema).toEqual(schema);
        }),
      );
    });
  }
});

describe('JsonConverter floats', () => {
  it('reads back every float32 and float64 exactly from the Java-style text it writes', () => {
    const c = converter();
    const f32 = Schemas.float32();
    const f64 = Schemas.float64();
    fc.assert(
      fc.property(
        fc.float({ noNaN: true, noDefaultInfinity: true }),
        fc.double({ noNaN: true }),
        (f, d) => {
          expect(c.toConnectData('t', c.fromConnectData('t', f32, f)).value).toBe(f);
          expect(c.toConnectData('t', c.fromConnectData('t', f64, d)).value).toBe(d);
        },
      ),
    );
  });
});

describe('JsonConverter envelope reading across schemas', () => {
  it('reads records whose schemas alternate, and 16-digit integers exactly', () => {
    const c = new JsonConverter();
    c.configure({ 'schemas.enable': 'true' }, false);
    const a = Schemas.struct([['ts', Schemas.int64()]], { name: 'A' });
    const b = Schemas.struct(
      [
        ['ts', Schemas.int64()],
        ['x', Schemas.float64()],
      ],
      { name: 'B' },
    );
    const ra = c.fromConnectData('t', a, { ts: 1700000000000001 })!;
    const rb = c.fromConnectData('t', b, { ts: 9007199254740993n, x: 1 / 7 })!;
    for (let i = 0; i < 3; i++) {
      expect(c.toConnectData('t', ra)).toMatchObject({
        schema: { name: 'A' },
        value: { ts: 1700000000000001 },
      });
      expect(c.toConnectData('t', rb)).toMatchObject({
        schema: { name: 'B' },
        value: { ts: 9007199254740993n, x: 1 / 7 },
      });
    }
  });
});
