import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Schema, Schemas } from '../../../../src/connect/api/index.ts';
import {
  CompactStructReader,
  StringCache,
} from '../../../../src/connect/converters/compact-struct-reader.ts';
import { JsonConverter } from '../../../../src/connect/converters/json-converter.ts';
import { parseJson } from '../../../../src/connect/converters/json-reader.ts';
import { JsonToConnect } from '../../../../src/connect/converters/json-to-connect.ts';

// A Debezium-style flattened row: every type the compact reader handles, optional
// fields, a default and a logical type.
const row: Schema = Schemas.struct(
  [
    ['id', Schemas.int64()],
    ['small', Schemas.int8()],
    ['mid', Schemas.int16({ optional: true })],
    ['qty', Schemas.int32()],
    ['ratio', Schemas.float32({ optional: true })],
    ['amount', Schemas.float64()],
    ['paid', Schemas.boolean()],
    ['note', Schemas.string({ optional: true })],
    ['status', Schemas.string({ optional: true, defaultValue: 'NEW' })],
    ['at', Schemas.timestamp()],
  ],
  { name: 'shop.orders.Value' },
);

const safeInt64 = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);
const rowValue = fc.record({
  id: safeInt64.map((n) =>
    typeof n === 'bigint' &&
    n >= BigInt(Number.MIN_SAFE_INTEGER) &&
    n <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(n)
      : n,
  ),
  small: fc.integer({ min: -128, max: 127 }),
  mid: fc.option(fc.integer({ min: -32768, max: 32767 }), { nil: null }),
  qty: fc.integer(),
  ratio: fc.option(fc.float({ noDefaultInfinity: true, noNaN: true }), { nil: null }),
  amount: fc.oneof(
    fc.double({ noNaN: true }),
    fc.integer().map((n) => n / 100),
  ),
  paid: fc.boolean(),
  note: fc.option(fc.string({ unit: 'binary' }), { nil: null }),
  status: fc.constantFrom('NEW', 'PAID', 'SHIPPED', 'dél\u00e9gu\u00e9 \u{1F4E6}'),
  at: fc.integer({ min: 0, max: 2 ** 45 }),
});

/** Compact envelopes take the fast path; a space after the first colon makes the converter take the general one. */
function generalPath(bytes: Buffer): Buffer {
  const text = bytes.toString('utf8');
  return Buffer.from(text.replace('{"schema":', '{"schema": '), 'utf8');
}

function converter(): JsonConverter {
  const c = new JsonConverter();
  c.configure({ 'schemas.enable': 'true' }, false);
  return c;
}

describe('CompactStructReader', () => {
  it('reads back every row JsonConverter writes, exactly as the general path does', () => {
    const c = converter();
    fc.assert(
      fc.property(rowValue, (value) => {
        const bytes = c.fromConnectData('t', row, value) as Buffer;
        const read = c.toConnectData('t', bytes);
        expect(read.value).toEqual({ ...value, ratio: value.ratio === null ? null : value.ratio });
        expect(read).toEqual(c.toConnectData('t', generalPath(bytes)));
      }),
      { numRuns: 500 },
    );
  });

  it('gives each row its own strings when values repeat and collide in its string cache', () => {
    const schema = Schemas.struct([
      ['code', Schemas.string()],
      ['label', Schemas.string({ optional: true })],
    ]);
    // Short strings of few letters repeat often and share hash slots; long and non-ASCII
    // ones take the uncached path.
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 4 }),
      fc.string({ unit: fc.constantFrom('x', 'y', 'é'), minLength: 20, maxLength: 30 }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, fc.option(text, { nil: null })), { maxLength: 60 }),
        (rows) => {
          const reader = CompactStructReader.of(schema)!;
          for (const [code, label] of rows) {
            const bytes = Buffer.from(JSON.stringify({ code, label }));
            expect(reader.read(bytes, 0, bytes.length)).toEqual({ code, label });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives what the general path gives for payloads it may meet, or declines', () => {
    const reader = CompactStructReader.of(row) as CompactStructReader;
    const general = new JsonToConnect(10, true);
    const odd = fc.constantFrom(
      '-0',
      '01',
      '-',
      '1.',
      '.5',
      '1e3',
      '1E+2',
      '2.50',
      '-0.0',
      '1.0E-5',
      '123456789012345678',
      '9007199254740993',
      '0.1234567890123456789',
      '1e400',
      '0.00000000000000000000000001',
      'true',
      'nul',
      'truex',
      '"NaN"',
      '"Infinity"',
      '"x"',
      '[]',
    );
    const integer = (max: number) =>
      fc.oneof(fc.integer({ min: -max, max: max - 1 }), fc.integer()).map(String);
    const float = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.integer().map((n) => `${n / 100}`),
      fc.integer({ min: -99999, max: 99999 }).map((n) => `${n}.0`),
      fc
        .tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -30, max: 30 }))
        .map(([m, e]) => `${m}.${m}E${e}`),
    );
    const text = fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme' }).map((s) => JSON.stringify(s)) },
      fc.string({ unit: 'binary' }).map((s) => `"${s}"`), // raw quotes, backslashes, controls
    );
    const byType: Record<string, fc.Arbitrary<string>> = {
      int8: integer(0x80),
      int16: integer(0x8000),
      int32: integer(0x80000000),
      int64: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: -(2 ** 40), max: 2 ** 45 }).map(String) },
        { weight: 1, arbitrary: fc.maxSafeInteger().map(String) },
        { weight: 1, arbitrary: fc.bigInt().map(String) },
      ),
      float32: float,
      float64: float,
      boolean: fc.constantFrom('true', 'false'),
      string: text,
    };
    const fields = row.fields ?? [];
    const literals = fc.tuple(
      ...fields.map((f) =>
        fc.oneof(
          { weight: 18, arbitrary: byType[f.schema.type] as fc.Arbitrary<string> },
          { weight: 1, arbitrary: fc.constant('null') },
          { weight: 1, arbitrary: odd },
        ),
      ),
    );
    const names = fields.map((f) => f.name);
    const payload = fc
      .record({
        literals,
        order: fc.oneof(
          { weight: 8, arbitrary: fc.constant(names) },
          { weight: 1, arbitrary: fc.shuffledSubarray(names, { minLength: names.length - 1 }) },
        ),
        // Mostly the compact layout, sometimes an extra field or whitespace.
        extra: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, fc.constant('1')),
        space: fc.oneof({ weight: 9, arbitrary: fc.constant('') }, fc.constant(' ')),
      })
      .map(({ literals, order, extra, space }) => {
        const pairs = order.map((n) => `"${n}":${space}${literals[names.indexOf(n)]}`);
        if (extra !== undefined) pairs.push(`"extra":${extra}`);
        return `{${pairs.join(',')}}`;
      });
    let agreed = 0;
    fc.assert(
      fc.property(payload, (json) => {
        const bytes = Buffer.from(json, 'utf8');
        const fast = reader.read(bytes, 0, bytes.length);
        if (fast === undefined) return;
        agreed++;
        expect(fast).toEqual(general.value(row, parseJson(json, true).value));
      }),
      { numRuns: 3000 },
    );
    // The comparison means something only if the fast path answered often enough.
    expect(agreed).toBeGreaterThan(100);
  });

  it('reads compact rows of the flattened CDC shape and declines layouts it does not own', () => {
    const reader = CompactStructReader.of(row) as CompactStructReader;
    const read = (text: string) => reader.read(Buffer.from(text), 0, Buffer.byteLength(text));
    const compact =
      '{"id":1000001,"small":-5,"mid":null,"qty":42,"ratio":0.5,"amount":1234.56,"paid":true,' +
      '"note":"caf\u00e9","status":"PAID","at":1793491200000}';
    expect(read(compact)).toEqual({
      id: 1000001,
      small: -5,
      mid: null,
      qty: 42,
      ratio: 0.5,
      amount: 1234.56,
      paid: true,
      note: 'caf\u00e9',
      status: 'PAID',
      at: 1793491200000,
    });
    expect(read(compact.replace('"mid":null', '"mid": null'))).toBeUndefined(); // whitespace
    expect(read(compact.replace('"note":"caf\u00e9"', '"note":"a\\"b"'))).toBeUndefined(); // escape
    expect(read(compact.replace('"small":-5', '"small":-500'))).toBeUndefined(); // int8 range
    expect(read(compact.replace('"status":"PAID"', '"status":null'))).toBeUndefined(); // default
    expect(read(compact.replace('"id":1000001', '"id":12345678901234567'))).toBeUndefined(); // long
    expect(CompactStructReader.of(Schemas.struct([['d', Schemas.decimal(2)]]))).toBeNull();
    expect(CompactStructReader.of(Schemas.int32())).toBeNull();
  });

  describe('string cache', () => {
    /** The cache's string for `text`, with the hash the compiled reader computes. */
    const get = (cache: StringCache, text: string): string => {
      const bytes = Buffer.from(text, 'latin1');
      let hash = 0;
      for (const c of bytes) hash = (Math.imul(hash, 31) + c) | 0;
      return cache.get(bytes, 0, bytes.length, hash);
    };

    it('gives the same string object for the same bytes, and the right one on a collision', () => {
      const cache = new StringCache();
      const first = get(cache, 'PAID');
      expect(get(cache, 'PAID')).toBe(first);
      // Every string of one hash goes to one slot: each read still gives its own text.
      for (const text of ['Aa', 'BB', 'Aa', 'BB']) expect(get(cache, text)).toBe(text);
    });

    it('grows for a field of recurring values that evict each other, up to 4096 slots', () => {
      const cache = new StringCache();
      let x = 0x2545f491;
      for (let i = 0; i < 200_000; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        get(cache, `city ${(x >>> 0) % 1500}`);
      }
      expect(cache.size).toBe(4096);
    });

    it('stays small for a few values and for unique ones', () => {
      const few = new StringCache();
      const unique = new StringCache();
      for (let i = 0; i < 100_000; i++) {
        get(few, ['c', 'u', 'd'][i % 3] as string);
        get(unique, `id-${i}`);
      }
      expect(few.size).toBe(256);
      expect(unique.size).toBe(256);
    });
  });
});
