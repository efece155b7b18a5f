import { describe, expect, it } from 'vitest';
import { UNCHANGED_TOAST } from '../src/pgoutput-decoder.ts';
import { compileRowReader, type ReaderColumn } from '../src/row-reader.ts';

const column = (name: string, position: number): ReaderColumn => ({
  name,
  position,
  fromText: (text) => `${name}=${text}`,
  missing: (v) => (v === UNCHANGED_TOAST ? 'toast' : v === null ? 'null' : 'absent'),
});

describe('compiled row readers', () => {
  it('reads each column from its position, in column order', () => {
    const read = compileRowReader([column('b', 2), column('a', 0)]);
    expect(Object.entries(read(['x', 'unused', 'y']))).toEqual([
      ['b', 'b=y'],
      ['a', 'a=x'],
    ]);
  });

  it('hands NULL, unchanged TOAST and a short tuple to the column`s missing-value rule', () => {
    const read = compileRowReader([column('n', 0), column('t', 1), column('gone', 5)]);
    expect(read([null, UNCHANGED_TOAST])).toEqual({ n: 'null', t: 'toast', gone: 'absent' });
  });

  it('takes any column name as a plain field, code-like and __proto__ included', () => {
    const names = [
      '__proto__',
      'constructor',
      'a"b',
      "c'd",
      'e\\f',
      '}; throw 1; ({',
      'é 日本',
      '',
    ];
    const read = compileRowReader(names.map((n, i) => column(n, i)));
    const row = read(names.map((_, i) => String(i)));
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.keys(row)).toEqual(names);
    names.forEach((n, i) => {
      expect(Object.getOwnPropertyDescriptor(row, n)?.value).toBe(`${n}=${i}`);
    });
  });
});
