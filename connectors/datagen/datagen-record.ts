/**
 * What the generator produces for sequence number n: a string key `key-<n mod
 * cardinality>` and a struct value whose fields are a pure function of n (plus the
 * creation time), so a task that resumes at n regenerates the same data.
 */
import { type Schema, Schemas, unscaledToBytes } from '../../src/connect/api/index.ts';

export const KEY_SCHEMA = Schemas.string();

export const VALUE_SCHEMA: Schema = Schemas.struct(
  [
    ['seq', Schemas.int64()],
    ['created', Schemas.timestamp()],
    ['quantity', Schemas.int32()],
    ['price', Schemas.decimal(2)],
    ['score', Schemas.float64()],
    ['active', Schemas.boolean()],
    ['category', Schemas.string({ optional: true })],
    ['payload', Schemas.string()],
  ],
  { name: 'datagen.Record', version: 1 },
);

const CATEGORIES = ['books', 'games', 'music', 'tools', null] as const;

/** A 32-bit mix of n (murmur3's finalizer): cheap, deterministic, well spread. */
function mix(n: number, salt: number): number {
  let h = (Math.imul(n, 0x9e3779b1) ^ salt) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function keyFor(seq: number, cardinality: number): string {
  return `key-${seq % cardinality}`;
}

export function valueFor(seq: number, created: number, payload: string): Record<string, unknown> {
  const r = mix(seq, 0x5bd1e995);
  return {
    seq,
    created,
    quantity: r % 100,
    price: unscaledToBytes(BigInt(mix(seq, 0x1b873593) % 1_000_000)),
    score: mix(seq, 0xcc9e2d51) / 0x100000000,
    active: (r & 1) === 1,
    category: CATEGORIES[r % CATEGORIES.length],
    payload,
  };
}
