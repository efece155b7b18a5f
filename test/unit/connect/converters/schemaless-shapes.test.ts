import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonConverter } from '../../../../src/connect/converters/json-converter.ts';
import { SchemalessShapes } from '../../../../src/connect/converters/schemaless-shapes.ts';

function converter(): JsonConverter {
  const c = new JsonConverter();
  c.configure({ 'schemas.enable': 'false' }, false);
  return c;
}

/** What the general path gives: a converter that has never seen a message. */
const general = (bytes: Buffer) => converter().toConnectData('t', bytes);

const NAMES = ['id', 'status', 'amount', 'note', 'ok', '__op'];
const literal = {
  number: fc.oneof(
    { weight: 4, arbitrary: fc.integer().map(String) },
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
    fc.constantFrom('-0', '-0.0', '1e3', '1.5E-7', '2.50', '9007199254740993', '1234567890123456'),
    fc.bigInt().map(String),
  ),
  string: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('"NEW"', '"PAID"', '"c"', '"dél\u00e9gu\u00e9 📦"') },
    fc.string({ unit: 'grapheme' }).map((s) => JSON.stringify(s)),
  ),
  boolean: fc.constantFrom('true', 'false'),
};
const kinds = ['number', 'string', 'number', 'string', 'boolean', 'string'] as const;

/** Messages of one shape, sometimes with a null, another kind, an odd layout or order. */
const message = fc
  .record({
    values: fc.tuple(
      ...kinds.map((k, i) =>
        fc.oneof(
          { weight: 12, arbitrary: literal[k] },
          { weight: 1, arbitrary: fc.constant('null') },
          { weight: 1, arbitrary: literal[kinds[(i + 1) % kinds.length] as typeof k] },
          { weight: 1, arbitrary: fc.constantFrom('{}', '[1]', '{"a":1}') },
        ),
      ),
    ),
    order: fc.oneof(
      { weight: 9, arbitrary: fc.constant(NAMES) },
      fc.shuffledSubarray(NAMES, { minLength: NAMES.length - 1 }),
    ),
    space: fc.oneof({ weight: 9, arbitrary: fc.constant('') }, fc.constant(' ')),
  })
  .map(({ values, order, space }) =>
    Buffer.from(
      `{${order.map((n) => `"${n}":${space}${values[NAMES.indexOf(n)]}`).join(',')}}`,
      'utf8',
    ),
  );

describe('JsonConverter without schemas, on messages of a repeating shape', () => {
  it('gives exactly what the general path gives, message after message', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 40 }), (messages) => {
        const learning = converter();
        for (const bytes of messages) {
          expect(learning.toConnectData('t', bytes)).toEqual(general(bytes));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads most messages of a shape from their bytes once it has seen one', () => {
    // Rows as a table gives them: compact, in order, each field of its kind or null.
    const row = fc
      .tuple(
        ...kinds.map((k) => fc.oneof({ weight: 9, arbitrary: literal[k] }, fc.constant('null'))),
      )
      .map((values) =>
        Buffer.from(`{${NAMES.map((n, i) => `"${n}":${values[i]}`).join(',')}}`, 'utf8'),
      );
    const shapes = new SchemalessShapes();
    const [first, ...rest] = fc.sample(row, { numRuns: 400, seed: 42 });
    shapes.learn(JSON.parse((first as Buffer).toString('utf8')));
    let read = 0;
    for (const bytes of rest) {
      const value = shapes.read(bytes);
      if (value === undefined) {
        shapes.learn(JSON.parse(bytes.toString('utf8')));
        continue;
      }
      read++;
      expect(value).toEqual(JSON.parse(bytes.toString('utf8')));
    }
    // The others hold a 16+ digit number or a string with escapes: the general path's.
    expect(read).toBeGreaterThan(rest.length / 2);
  });

  it('stops trying after a run of messages no shape reads, or after too many shapes', () => {
    const compact = Buffer.from('{"a":1,"b":"x"}');
    const spaced = shapes(1000, () => Buffer.from('{"a": 1, "b": "x"}'));
    expect(spaced.read(compact)).toBeUndefined();

    // {"a","b"} and 15 more shapes are the 16 a converter keeps; a 17th stops it.
    const many = shapes(16, (i) => Buffer.from(`{"f${i}":1}`));
    expect(many.read(Buffer.from('{"f0":1}'))).toBeUndefined();
    const few = shapes(15, (i) => Buffer.from(`{"f${i}":1}`));
    expect(few.read(Buffer.from('{"f14":1}'))).toEqual({ f14: 1 });
    expect(few.read(compact)).toBeUndefined(); // another shape: the general path's
  });
});

/** SchemalessShapes after the general path read `n` messages it could not. */
function shapes(n: number, make: (i: number) => Buffer): SchemalessShapes {
  const s = new SchemalessShapes();
  s.learn(JSON.parse('{"a":1,"b":"x"}'));
  for (let i = 0; i < n; i++) {
    const bytes = make(i);
    if (s.read(bytes) === undefined) s.learn(JSON.parse(bytes.toString('utf8')));
  }
  return s;
}
