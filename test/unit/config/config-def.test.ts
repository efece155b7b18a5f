import { describe, expect, it } from 'vitest';
import { atLeast, define, parseConfig } from '../../../src/config/config-def.ts';

const defs = [
  define<number>({
    name: 'tasks.max',
    type: 'int',
    default: 1,
    validator: atLeast(1),
    doc: 'tasks',
  }),
  define<string>({ name: 'topic', type: 'string', doc: 'required topic' }),
  define<number>({ name: 'flush.messages', type: 'long', default: 1, doc: 'flush' }),
];

describe('parseConfig', () => {
  it('fills defaults, types values and lists unknown keys', () => {
    const parsed = parseConfig(defs, { topic: 'a', extra: 'x' });
    expect(parsed.errors).toEqual([]);
    expect(parsed.values).toMatchObject({ 'tasks.max': 1, topic: 'a', extra: 'x' });
    expect(parsed.unknown).toEqual(['extra']);
  });

  it('names the key, the value and what is expected for a bad value', () => {
    const parsed = parseConfig(defs, { topic: 'a', 'tasks.max': 'many' });
    expect(parsed.errors).toEqual([
      { key: 'tasks.max', value: 'many', message: 'expected a whole number' },
    ]);
  });

  it('reports a missing required key', () => {
    expect(parseConfig(defs, {}).errors.map((e) => e.key)).toEqual(['topic']);
  });

  it('reads Long.MAX_VALUE as the largest safe integer', () => {
    const parsed = parseConfig(defs, { topic: 'a', 'flush.messages': '9223372036854775807' });
    expect(parsed.values['flush.messages']).toBe(Number.MAX_SAFE_INTEGER);
  });
});
