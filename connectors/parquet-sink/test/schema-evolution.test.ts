import { describe, expect, it } from 'vitest';
import { type Schema, Schemas } from '../../../src/connect/api/index.ts';
import { type Compatibility, evolve } from '../schema-evolution.ts';
import { inferSchema } from '../schema-inference.ts';

const v1 = Schemas.struct([
  ['id', Schemas.int64()],
  ['name', Schemas.string()],
  ['note', Schemas.string({ optional: true })],
]);
const addOptional = Schemas.struct([
  ...fieldsOf(v1),
  ['email', Schemas.string({ optional: true })],
]);
const addRequired = Schemas.struct([...fieldsOf(v1), ['email', Schemas.string()]]);
const dropRequired = Schemas.struct([
  ['id', Schemas.int64()],
  ['note', Schemas.string({ optional: true })],
]);
const dropOptional = Schemas.struct([
  ['id', Schemas.int64()],
  ['name', Schemas.string()],
]);
const retyped = Schemas.struct([
  ['id', Schemas.string()],
  ['name', Schemas.string()],
]);

function fieldsOf(s: Schema): Array<[string, Schema]> {
  return (s.fields ?? []).map((f) => [f.name, f.schema]);
}

describe('schema.compatibility decides which schema changes share a file', () => {
  const cases: Array<[string, Schema, Record<Compatibility, boolean>]> = [
    [
      'add an optional field',
      addOptional,
      { NONE: false, BACKWARD: true, FORWARD: true, FULL: true },
    ],
    [
      'add a required field',
      addRequired,
      { NONE: false, BACKWARD: false, FORWARD: true, FULL: false },
    ],
    [
      'drop a required field',
      dropRequired,
      { NONE: false, BACKWARD: true, FORWARD: false, FULL: false },
    ],
    [
      'drop an optional field',
      dropOptional,
      { NONE: false, BACKWARD: true, FORWARD: true, FULL: true },
    ],
    ['change a field type', retyped, { NONE: false, BACKWARD: false, FORWARD: false, FULL: false }],
  ];
  for (const [change, next, expected] of cases) {
    it(`${change}: ${JSON.stringify(expected)}`, () => {
      for (const mode of Object.keys(expected) as Compatibility[]) {
        expect(evolve(v1, next, mode) !== undefined, mode).toBe(expected[mode]);
      }
    });
  }

  it('an equal schema (another object) never rotates, even under NONE', () => {
    expect(evolve(v1, structuredClone(v1), 'NONE')).toBe(v1);
  });

  it('a merged schema holds both sides, fields of one side only becoming optional', () => {
    const merged = evolve(v1, addOptional, 'FULL');
    expect(merged?.fields?.map((f) => [f.name, f.schema.optional])).toEqual([
      ['id', false],
      ['name', false],
      ['note', true],
      ['email', true],
    ]);
    expect(
      evolve(v1, dropRequired, 'BACKWARD')?.fields?.find((f) => f.name === 'name')?.schema.optional,
    ).toBe(true);
  });
});

describe('schemaless inference', () => {
  it('types JSON values, all optional, integers as int64 unless the file holds a float64', () => {
    const s = inferSchema({
      id: 1,
      price: 2.5,
      ok: true,
      tags: ['a'],
      nested: { x: 1 },
      gone: null,
    });
    expect(s?.fields?.map((f) => [f.name, f.schema.type, f.schema.optional])).toEqual([
      ['id', 'int64', true],
      ['price', 'float64', true],
      ['ok', 'boolean', true],
      ['tags', 'array', true],
      ['nested', 'struct', true],
    ]);
    expect(inferSchema({ price: 3 }, s)?.fields?.[0]?.schema.type).toBe('float64');
  });

  it('refuses arrays whose elements disagree on their type', () => {
    expect(() => inferSchema({ a: [1, 'x'] })).toThrow(/array elements have different types/);
    expect(inferSchema([1, 2.5])?.valueSchema?.type).toBe('float64');
  });
});
