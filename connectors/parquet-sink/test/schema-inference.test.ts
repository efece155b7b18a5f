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

/** A value of the same JSON type as `v`, so rows built from it often infer alike. */
function sameKind(v: unknown): fc.Arbitrary<unknown> {
  if (v === null) return fc.constant(null);
  if (typeof v === 'string') return fc.string({ maxLength: 4 });
  if (typeof v === 'boolean') return fc.boolean();
  if (typeof v === 'number') {
    return Number.isInteger(v)
      ? fc.integer()
      : fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d));
  }
  if (Array.isArray(v)) return fc.array(fc.integer(), { maxLength: 2 });
  return sameShape(v as Record<string, unknown>);
}

/** A row with `a`'s keys in `a`'s order, each value of the same JSON type. */
function sameShape(a: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(a);
  return fc
    .tuple(...keys.map((k) => sameKind(a[k])))
    .map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i]])));
}

/** Half the pairs share a shape (where `yes` is possible), half are unrelated rows. */
const pair = row.chain((a) => fc.tuple(fc.constant(a), fc.oneof(sameShape(a), row), hintRow));

describe('matchesInference', () => {
  it('says yes only when inferring the value gives an equal schema', () => {
    let checked = 0;
    let yes = 0;
    fc.assert(
      fc.property(pair, ([a, b, h]) => {
        const hint = h === undefined ? undefined : inferSchema(h);
        const inferred = inferSchema(a, hint);
        if (inferred === undefined) return;
        checked++;
        if (matchesInference(b, inferred, hint)) {
          yes++;
          expect(schemaEquals(inferSchema(b, hint) ?? null, inferred)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
    // The property says something only through its `yes` branch: it must be taken
    // often, and not on every pair either (unrelated rows mostly differ).
    expect(checked).toBeGreaterThan(1000);
    expect(yes).toBeGreaterThan(checked / 20);
    expect(yes).toBeLessThan(checked);
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
