import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkValue,
  DataException,
  lookupPath,
  requireField,
  Schemas,
  schemaEquals,
  schemaFingerprint,
  validateValue,
} from '../../../../src/connect/api/index.ts';

const address = Schemas.struct([['city', Schemas.string()]], { optional: true });
const person = Schemas.struct(
  [
    ['id', Schemas.int64()],
    ['age', Schemas.int8({ optional: true })],
    ['tags', Schemas.array(Schemas.string())],
    ['attrs', Schemas.map(Schemas.string(), Schemas.int32())],
    ['address', address],
    ['born', Schemas.date()],
    ['wake', Schemas.time()],
  ],
  { name: 'person' },
);

const valid = {
  id: 2n ** 60n,
  age: null,
  tags: ['a'],
  attrs: new Map([['x', 1]]),
  address: { city: 'Oslo' },
  born: 19000,
  wake: 25_200_000,
};

describe('validateValue', () => {
  it('accepts values that follow the schema conventions', () => {
    expect(() => validateValue(person, valid)).not.toThrow();
    expect(checkValue(person, { ...valid, attrs: { x: 1 }, address: null })).toBeUndefined();
  });

  it('names the path and what was expected', () => {
    expect(checkValue(person, { ...valid, tags: ['a', 3] })).toBe(
      "expected string at 'tags[1]', got number 3",
    );
    expect(checkValue(person, { ...valid, address: { city: null } })).toBe(
      "null value at 'address.city' for a required string schema",
    );
    expect(checkValue(person, { ...valid, age: 200 })).toMatch(/expected int8 at 'age'/);
    expect(checkValue(person, { ...valid, wake: 86_400_000 })).toMatch(/milliseconds of the day/);
    expect(checkValue(person, { ...valid, extra: 1 })).toMatch(/unknown field 'extra'/);
    expect(() => validateValue(Schemas.int64(), 2n ** 63n)).toThrow(DataException);
  });
});

describe('schemaEquals and schemaFingerprint', () => {
  it('treat structurally equal schemas as equal and different ones as different', () => {
    const rebuilt = Schemas.struct(
      person.fields!.map((f) => [f.name, { ...f.schema }]),
      { name: 'person' },
    );
    expect(schemaEquals(person, rebuilt)).toBe(true);
    expect(schemaFingerprint(person)).toBe(schemaFingerprint(rebuilt));
    const renamed = { ...rebuilt, name: 'other' };
    expect(schemaEquals(person, renamed)).toBe(false);
    expect(schemaFingerprint(person)).not.toBe(schemaFingerprint(renamed));
  });

  it('agree with each other on generated schemas', () => {
    const leaf = fc.constantFrom(
      Schemas.int32(),
      Schemas.string({ optional: true }),
      Schemas.decimal(2),
      Schemas.boolean({ defaultValue: true }),
    );
    const schema = fc
      .array(fc.tuple(fc.constantFrom('a', 'b', 'c'), leaf), { maxLength: 3 })
      .map((fields) => Schemas.struct(fields));
    fc.assert(
      fc.property(schema, schema, (a, b) => {
        expect(schemaFingerprint(a) === schemaFingerprint(b)).toBe(schemaEquals(a, b));
      }),
    );
  });
});

describe('field lookup', () => {
  const envelope = Schemas.struct([
    ['source', Schemas.struct([['lsn', Schemas.int64()]])],
    ['op', Schemas.string()],
  ]);

  it('follows dotted paths through structs, with and without schemas', () => {
    expect(lookupPath(envelope, { source: { lsn: 7 }, op: 'c' }, 'source.lsn')).toEqual({
      schema: Schemas.int64(),
      value: 7,
    });
    expect(lookupPath(envelope, { source: null, op: 'c' }, 'source.lsn')?.value).toBeNull();
    expect(lookupPath(envelope, {}, 'source.xid')).toBeUndefined();
    expect(lookupPath(null, { source: { lsn: 7 } }, 'source.lsn')).toEqual({
      schema: null,
      value: 7,
    });
  });

  it('names the known fields when a required field is missing', () => {
    expect(() => requireField(envelope, 'after')).toThrow(
      "struct schema has no field 'after' (fields: source, op)",
    );
  });
});
