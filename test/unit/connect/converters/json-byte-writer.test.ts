import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DataException,
  LogicalType,
  type Schema,
  Schemas,
} from '../../../../src/connect/api/index.ts';
import {
  JsonWriter,
  type JsonWriterOptions,
} from '../../../../src/connect/converters/json-writer.ts';
import { ReferenceJsonWriter } from './reference-json-writer.ts';

// The reference is ReferenceJsonWriter.value(), a plain string writer (the runtime's
// first one), while json-converter.test.ts checks the bytes against Kafka's: the byte
// writer must give Buffer.from(value()) exactly, and throw what value() throws, for any
// schema and value.

/** The reference string writer with the same options as `writer`. */
const references = new WeakMap<JsonWriter, ReferenceJsonWriter>();
function reference(writer: JsonWriter): ReferenceJsonWriter {
  const found = references.get(writer);
  if (found === undefined) throw new Error('writer made without newWriter()');
  return found;
}
function newWriter(options: JsonWriterOptions): JsonWriter {
  const writer = new JsonWriter(options);
  references.set(writer, new ReferenceJsonWriter(options));
  return writer;
}

const OPTIONS: JsonWriterOptions[] = [
  { decimalFormat: 'BASE64', replaceNullWithDefault: true },
  { decimalFormat: 'NUMERIC', replaceNullWithDefault: true },
  { decimalFormat: 'BASE64', replaceNullWithDefault: false },
];

type Outcome = { bytes: Buffer } | { error: { type: string; message: string } };

function outcome(write: () => Buffer): Outcome {
  try {
    return { bytes: Buffer.from(write()) };
  } catch (e) {
    const err = e as Error;
    return { error: { type: err.constructor.name, message: err.message } };
  }
}

/** What the string writer gives, as bytes (an envelope when there is a head). */
function expected(writer: JsonWriter, schema: Schema | null, value: unknown, head: Buffer | null) {
  return outcome(() => {
    const text = Buffer.from(reference(writer).value(schema, value), 'utf8');
    return head === null ? text : Buffer.concat([head, text, Buffer.from('}')]);
  });
}

function actual(writer: JsonWriter, schema: Schema | null, value: unknown, head: Buffer | null) {
  return outcome(() => writer.toBuffer(schema, value, head));
}

// Strings: every escape class, multi-byte UTF-8, pairs and lone surrogates.
const special = fc.constantFrom(
  '"',
  '\\',
  '/',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0080',
  'é',
  '߿',
  'ࠀ',
  '€',
  '\u2028',
  '\uffff',
  '😀',
  '\ud7ff',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ue000',
  'u00e9',
);
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: special }),
  fc.string({ unit: fc.oneof(special, fc.string({ minLength: 1, maxLength: 1 })) }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ unit: 'binary' }),
  // Long enough for Node's UTF-8 encoder, which writes strings with nothing to escape.
  fc.string({ unit: 'grapheme', minLength: 60, maxLength: 150 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', ' ', '"'), minLength: 60 }),
);

const doubles = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, 1e7, 9999999, 1e-3, 0.00099, 5e-324, 1.7976931348623157e308, 0.1, 100),
  fc.integer().map((n) => n / 8),
);
const floats = fc.oneof(fc.float(), doubles);
const int64 = fc.oneof(
  fc.maxSafeInteger(),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.constantFrom(2 ** 53, -(2 ** 60), 1e20, 2 ** 63),
);
const dates = fc.oneof(
  fc.date({ noInvalidDate: true }),
  fc.constant(new Date(Number.NaN)),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
);

/** Values of no particular type: what a wrong value in a field may be. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.integer(),
    doubles,
    int64,
    text,
    fc.uint8Array({ maxLength: 8 }),
    dates,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(text, tie('v'), { maxKeys: 3 }),
    fc.array(fc.tuple(tie('v'), tie('v')), { maxLength: 3 }).map((e) => new Map(e)),
    fc.array(fc.tuple(text, tie('v')), { maxLength: 3 }).map((e) => new Map(e)),
  ),
})).v;

/** An integer in range, or one at or just past its edges (invalid there). */
function intIn(min: number, max: number): fc.Arbitrary<number> {
  return fc.oneof(
    { arbitrary: fc.integer({ min, max }), weight: 6 },
    { arbitrary: fc.constantFrom(min, max, -0, min - 1, max + 1, 0.5, Number.NaN), weight: 1 },
  );
}

/** A valid value of a schema (before nulls and wrong values are mixed in). */
function validValue(s: Schema): fc.Arbitrary<unknown> {
  if (s.name === LogicalType.Decimal) return fc.uint8Array({ maxLength: 20 });
  if (s.name === LogicalType.Date || s.name === LogicalType.Time) {
    return fc.oneof(dates, fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
  }
  if (s.name === LogicalType.Timestamp) return fc.oneof(dates, int64);
  switch (s.type) {
    case 'int8':
      return intIn(-128, 127);
    case 'int16':
      return intIn(-32768, 32767);
    case 'int32':
      return intIn(-(2 ** 31), 2 ** 31 - 1);
    case 'int64':
      return int64;
    case 'float32':
      return floats;
    case 'float64':
      return doubles;
    case 'boolean':
      return fc.boolean();
    case 'string':
      return text;
    case 'bytes':
      return fc.oneof(
        fc.uint8Array({ maxLength: 10 }),
        fc.uint8Array({ maxLength: 700 }),
        // A Buffer from Node's pool: a view at an offset into a larger ArrayBuffer.
        fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      );
    case 'array':
      return fc.array(someValue(s.valueSchema!), { maxLength: 4 });
    case 'map': {
      const entries = fc.array(fc.tuple(someValue(s.keySchema!), someValue(s.valueSchema!)), {
        maxLength: 3,
      });
      return s.keySchema!.type === 'string'
        ? fc.oneof(
            entries.map((e) => new Map(e)),
            fc.dictionary(text, someValue(s.valueSchema!), { maxKeys: 3 }),
          )
        : entries.map((e) => new Map(e));
    }
    case 'struct': {
      const fields = s.fields ?? [];
      return fc.tuple(...fields.map((f) => someValue(f.schema))).chain((values) => {
        const all = Object.fromEntries(fields.map((f, i) => [f.name, values[i]]));
        return fc.oneof(
          { arbitrary: fc.constant(all), weight: 8 },
          // A missing field reads as undefined; an extra property is ignored.
          {
            arbitrary: fc.constant(
              Object.fromEntries(fields.slice(1).map((f, i) => [f.name, values[i + 1]])),
            ),
            weight: 1,
          },
          { arbitrary: fc.constant({ extra: 1, ...all }), weight: 1 },
        );
      });
    }
  }
}

/** Mostly a valid value, sometimes a null or a value of another type (~20% fail). */
function someValue(s: Schema): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: validValue(s), weight: 40 },
    { arbitrary: fc.constantFrom(null, undefined), weight: 2 },
    { arbitrary: anyValue, weight: 1 },
  );
}

const primitiveTypes = [
  'int8',
  'int16',
  'int32',
  'int64',
  'float32',
  'float64',
  'boolean',
  'string',
  'bytes',
] as const;

/** Names a schema may carry: none, its logical type's, or an ordinary name. */
function nameFor(type: Schema['type']): fc.Arbitrary<Pick<Schema, 'name' | 'parameters'>> {
  const logical: Array<Pick<Schema, 'name' | 'parameters'>> = [];
  if (type === 'bytes') {
    for (const scale of ['0', '2', '7', '-3']) {
      logical.push({ name: LogicalType.Decimal, parameters: { scale } });
    }
    logical.push({ name: LogicalType.Decimal });
  }
  if (type === 'int32') logical.push({ name: LogicalType.Date }, { name: LogicalType.Time });
  if (type === 'int64') logical.push({ name: LogicalType.Timestamp });
  return fc.oneof(
    fc.constant({}),
    fc.constant({ name: 'io.debezium.data.Enum', parameters: { allowed: 'a,b' } }),
    ...(logical.length > 0 ? [fc.constantFrom(...logical)] : []),
  );
}

/** Optional or not, with or without a default (valid, or of another type). */
function withFlags(base: Schema): fc.Arbitrary<Schema> {
  return fc
    .record({
      optional: fc.boolean(),
      defaultValue: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 6 },
        { arbitrary: fc.constant(null), weight: 1 },
        { arbitrary: validValue(base), weight: 2 },
        { arbitrary: anyValue, weight: 1 },
      ),
    })
    .map(({ optional, defaultValue }) =>
      defaultValue === undefined ? { ...base, optional } : { ...base, optional, defaultValue },
    );
}

const fieldName = fc.oneof(
  fc.constantFrom('id', 'a', 'ts_ms', 'name with space', '"quoted"', '__proto__', 'é', '😀'),
  text,
);

const schemaArb: fc.Arbitrary<Schema> = fc.letrec<{ schema: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .constantFrom(...primitiveTypes)
      .chain((type) =>
        nameFor(type).chain((named) => withFlags({ type, optional: false, ...named })),
      ),
    tie('schema').chain((items) => withFlags(Schemas.array(items))),
    fc
      .tuple(fc.oneof(fc.constant(Schemas.string()), tie('schema')), tie('schema'))
      .chain(([k, v]) => withFlags(Schemas.map(k, v))),
    fc
      .uniqueArray(fc.tuple(fieldName, tie('schema')), {
        maxLength: 6,
        selector: ([name]) => name,
      })
      .chain((fields) => withFlags(Schemas.struct(fields, { name: 'S' }))),
  ),
})).schema;

describe('JsonWriter.toBuffer', () => {
  for (const options of OPTIONS) {
    const label = `${options.decimalFormat}, replace.null.with.default=${options.replaceNullWithDefault}`;

    it(`writes the bytes of value(), or throws its error, for any schema and value (${label})`, () => {
      const writer = newWriter(options);
      fc.assert(
        fc.property(
          schemaArb.chain((schema) => fc.tuple(fc.constant(schema), someValue(schema))),
          ([schema, value]) => {
            expect(actual(writer, schema, value, null)).toEqual(
              expected(writer, schema, value, null),
            );
          },
        ),
        { numRuns: 400 },
      );
    });
  }

  it('writes the bytes of value() for schemaless values, in an envelope when given a head', () => {
    const writer = newWriter(OPTIONS[0]);
    const head = Buffer.from('{"schema":null,"payload":');
    fc.assert(
      fc.property(anyValue, fc.boolean(), (value, withHead) => {
        const h = withHead ? head : null;
        expect(actual(writer, null, value, h)).toEqual(expected(writer, null, value, h));
      }),
      { numRuns: 500 },
    );
  });

  it('writes the head, the value and a closing brace for an envelope', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.struct([['id', Schemas.int32()]]);
    const head = Buffer.from(`{"schema":${writer.schemaJson(schema)},"payload":`);
    expect(writer.toBuffer(schema, { id: 7 }, head).toString()).toBe(
      '{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false},"payload":{"id":7}}',
    );
  });

  it('writes integers up to 2^53 exactly, -0 as 0, larger int64 through BigInt', () => {
    const writer = newWriter(OPTIONS[0]);
    const cases: Array<[unknown, string]> = [
      [0, '0'],
      [-0, '0'],
      [9, '9'],
      [10, '10'],
      [-2147483648, '-2147483648'],
      [999999999999999, '999999999999999'],
      [1e15, '1000000000000000'],
      [9007199254740945, '9007199254740945'],
      [-9007199254740991, '-9007199254740991'],
      [2 ** 53, '9007199254740992'],
      [1e20, '100000000000000000000'],
      [-(2n ** 63n), '-9223372036854775808'],
    ];
    for (const [value, text] of cases) {
      expect(writer.toBuffer(Schemas.int64(), value, null).toString()).toBe(text);
    }
  });

  it('escapes as Jackson does: short escapes, upper-case \\u00XX, lone surrogates escaped', () => {
    const writer = newWriter(OPTIONS[0]);
    const value = 'a"b\\c\n\b\f\r\t\u0000\u001f\u007fé€😀\ud800x\udc00\ud800\ue000';
    expect(writer.toBuffer(Schemas.string(), value, null).toString('latin1')).toBe(
      Buffer.from(
        '"a\\"b\\\\c\\n\\b\\f\\r\\t\\u0000\\u001F\u007fé€😀\\uD800x\\uDC00\\uD800\ue000"',
        'utf8',
      ).toString('latin1'),
    );
  });

  it('writes strings longer than the worst-case reservation threshold exactly', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.string();
    for (const unit of ['a', '"', '\u0001', 'é', '€', '😀', '\ud800']) {
      const value = `${unit.repeat(5000)}end`;
      expect(writer.toBuffer(schema, value, null)).toEqual(
        Buffer.from(reference(writer).value(schema, value)),
      );
    }
  });

  it('keeps every message intact while later ones fill and overflow slabs', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.struct([
      ['n', Schemas.int32()],
      ['s', Schemas.string()],
    ]);
    const values = Array.from({ length: 3000 }, (_, i) => ({ n: i, s: 'x€'.repeat(i % 700) }));
    // ~3 MB in all: messages straddle the end of several 1 MiB slabs.
    const written = values.map((v) => writer.toBuffer(schema, v, null));
    written.forEach((bytes, i) => {
      expect(bytes.toString()).toBe(reference(writer).value(schema, values[i]));
    });
    expect(new Set(written.map((b) => b.buffer)).size).toBeGreaterThan(1);
    expect(written[0].buffer === written[1].buffer, 'one slab').toBe(true);
  });

  it('writes a frozen flat struct shared by many messages exactly, across slabs', () => {
    const writer = newWriter(OPTIONS[0]);
    const source = Schemas.struct([
      ['name', Schemas.string()],
      ['ts_ms', Schemas.int64()],
      ['db', Schemas.string({ optional: true })],
      ['last', Schemas.boolean()],
    ]);
    const envelope = Schemas.struct([
      ['after', Schemas.struct([['n', Schemas.int32()]])],
      ['source', source],
    ]);
    // ~3 MB in all, so the shared block is also written where a message moves slabs.
    const shared = Object.freeze({ name: 'x€'.repeat(400), ts_ms: 2 ** 40, db: null, last: true });
    const other = Object.freeze({ ...shared, last: false });
    const values = Array.from({ length: 3000 }, (_, n) => ({
      after: { n },
      source: n % 1000 === 999 ? other : shared,
    }));
    const written = values.map((v) => writer.toBuffer(envelope, v, null));
    written.forEach((bytes, i) => {
      expect(bytes.toString()).toBe(reference(writer).value(envelope, values[i]));
    });
    expect(new Set(written.map((b) => b.buffer)).size).toBeGreaterThan(1);
  });

  it('writes a frozen struct afresh under another schema, or when it holds a Date', () => {
    const writer = newWriter(OPTIONS[0]);
    const narrow = Schemas.struct([['a', Schemas.string()]]);
    const wide = Schemas.struct([
      ['a', Schemas.string()],
      ['b', Schemas.string({ optional: true })],
    ]);
    const stamped = Schemas.struct([['at', Schemas.timestamp()]]);
    const outer = (inner: Schema) => Schemas.struct([['s', inner]]);
    const value = Object.freeze({ a: 'same' });
    for (const schema of [narrow, wide, narrow]) {
      expect(writer.toBuffer(outer(schema), { s: value }, null).toString()).toBe(
        reference(writer).value(outer(schema), { s: value }),
      );
    }
    // Freezing the struct does not freeze the Date in it.
    const at = new Date(0);
    const dated = Object.freeze({ at });
    const first = writer.toBuffer(outer(stamped), { s: dated }, null).toString();
    at.setTime(1000);
    const second = writer.toBuffer(outer(stamped), { s: dated }, null).toString();
    expect([first, second]).toEqual(['{"s":{"at":0}}', '{"s":{"at":1000}}']);
  });

  it('writes a message larger than a slab', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.array(Schemas.string());
    const value = Array.from({ length: 40 }, (_, i) => `${i}`.repeat(30_000));
    const before = writer.toBuffer(Schemas.int32(), 1, null);
    const big = writer.toBuffer(schema, value, null);
    const after = writer.toBuffer(Schemas.int32(), 2, null);
    expect(big.length).toBeGreaterThan(1024 * 1024);
    expect(big.toString()).toBe(reference(writer).value(schema, value));
    expect([before.toString(), after.toString()]).toEqual(['1', '2']);
  });

  it('leaves earlier messages and the next one intact after a value fails half-way', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.struct([
      ['a', Schemas.string()],
      ['b', Schemas.int32()],
    ]);
    const first = writer.toBuffer(schema, { a: 'first', b: 1 }, null);
    expect(() => writer.toBuffer(schema, { a: 'x'.repeat(100), b: 'no' }, null)).toThrow(
      new DataException('Invalid type for int32: string "no"'),
    );
    const next = writer.toBuffer(schema, { a: 'next', b: 2 }, null);
    expect([first.toString(), next.toString()]).toEqual([
      '{"a":"first","b":1}',
      '{"a":"next","b":2}',
    ]);
  });

  it('writes a message asked for by a getter while another is being written', () => {
    const writer = newWriter(OPTIONS[0]);
    const schema = Schemas.struct([
      ['a', Schemas.int32()],
      ['b', Schemas.int32()],
    ]);
    let inner: Buffer | undefined;
    const value = {
      a: 1,
      get b() {
        inner = writer.toBuffer(schema, { a: 3, b: 4 }, null);
        return 2;
      },
    };
    const outer = writer.toBuffer(schema, value, null);
    expect([outer.toString(), inner?.toString()]).toEqual(['{"a":1,"b":2}', '{"a":3,"b":4}']);
  });

  it('treats field names as data: names that look like code are written, never run', () => {
    const writer = newWriter(OPTIONS[0]);
    const name = '"]; throw new Error("ran"); //\u2028\\';
    const schema = Schemas.struct([[name, Schemas.string({ optional: true })]]);
    expect(writer.toBuffer(schema, { [name]: 'v' }, null)).toEqual(
      Buffer.from(reference(writer).value(schema, { [name]: 'v' })),
    );
  });
});
