import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemaEquals } from '../../../src/connect/api/index.ts';
import { inferSchema, matchesInference } from '../schema-inference.ts';

/** Schemaless JSON rows as JsonConverter hands them over: flat or nested objects. */
const scalar = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null),
);
const row = fc.dictionary(
  fc.constantFrom('a', 'b', 'c', 'd'),
  fc.oneof(
    scalar,
    fc.dictionary(fc.constantFrom('x', 'y'), scalar),
    fc.array(fc.integer(), { maxLength: 2 }),
  ),
);
const hintRow = fc.option(row, { nil: undefined });

describe('matchesInference', () => {
  it('says yes only when inferring the value gives an equal schema', () => {
    fc.assert(
      fc.property(row, row, hintRow, (a, b, h) => {
        const hint = h === undefined ? undefined : inferSchema(h);
        const inferred = inferSchema(a, hint);
        if (inferred === undefined) return;
        if (matchesInference(b, inferred, hint)) {
          expect(schemaEquals(inferSchema(b, hint) ?? null, inferred)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('says yes for every row of the same shape (no nulls, arrays or maps)', () => {
    const first = { id: 1, name: 'a', score: 1.5, ok: true, at: { day: 3 } };
    const inferred = inferSchema(first);
    if (inferred === undefined) throw new Error('no schema');
    expect(
      matchesInference({ id: 2, name: 'b', score: 2.5, ok: false, at: { day: 4 } }, inferred),
    ).toBe(true);
    // An integral score after 1.5: still float64 when the open file holds float64.
    expect(
      matchesInference(
        { id: 2, name: 'b', score: 2, ok: false, at: { day: 4 } },
        inferred,
        inferred,
      ),
    ).toBe(true);
    expect(
      matchesInference({ id: 2, name: 'b', score: 2, ok: false, at: { day: 4 } }, inferred),
    ).toBe(false);
    expect(matchesInference({ id: 2, name: 'b', score: 2.5, ok: false }, inferred)).toBe(false);
    expect(
      matchesInference({ name: 'b', id: 2, score: 2.5, ok: false, at: { day: 4 } }, inferred),
    ).toBe(false);
  });
});
