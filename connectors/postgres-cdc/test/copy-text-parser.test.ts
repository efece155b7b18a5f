import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CopyFormatError, CopyTextParser } from '../src/copy-text-parser.ts';
import type { ColumnValue } from '../src/pgoutput-decoder.ts';

/** Every row of `data` fed in the given pieces. */
function parse(columns: number, pieces: Buffer[]): ColumnValue[][] {
  const parser = new CopyTextParser(columns);
  const rows: ColumnValue[][] = [];
  for (const piece of pieces) {
    parser.push(piece);
    for (let row = parser.nextRow(); row !== null; row = parser.nextRow()) rows.push(row);
  }
  parser.end();
  return rows;
}

/** `data` cut at the given byte offsets. */
function cut(data: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at)].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(data.subarray(from, p));
    from = p;
  }
  pieces.push(data.subarray(from));
  return pieces;
}

/**
 * COPY text as Postgres writes it (CopyAttributeOutText): backslash, tab, newline,
 * carriage return, backspace, form feed and vertical tab escaped. With `bytes`, other
 * characters are written as \ooo or \xhh escapes of their UTF-8 bytes, which COPY
 * FROM accepts and the parser must read too.
 */
function encode(rows: ColumnValue[][], bytes: 'none' | 'octal' | 'hex' = 'none'): Buffer {
  const escapes: Record<string, string> = {
    '\\': '\\\\',
    '\t': '\\t',
    '\n': '\\n',
    '\r': '\\r',
    '\b': '\\b',
    '\f': '\\f',
    '\v': '\\v',
  };
  const field = (v: ColumnValue): string => {
    if (v === null) return '\\N';
    if (typeof v !== 'string') throw new Error('text fields only');
    let out = '';
    for (const ch of v) {
      if (escapes[ch]) out += escapes[ch];
      else if (bytes === 'none') out += ch;
      else
        for (const b of Buffer.from(ch, 'utf8'))
          out += bytes === 'octal' ? `\\${b.toString(8)}` : `\\x${b.toString(16)}`;
    }
    return out;
  };
  return Buffer.from(rows.map((r) => `${r.map(field).join('\t')}\n`).join(''), 'utf8');
}

describe('COPY text format parser', () => {
  it.each([
    ['plain text', 'abc', 'abc'],
    ['an empty string', '', ''],
    ['NULL', '\\N', null],
    ['a backslash and N as text', '\\\\N', '\\N'],
    ['tab, newline and carriage return escapes', 'a\\tb\\nc\\rd', 'a\tb\nc\rd'],
    ['backspace, form feed and vertical tab escapes', '\\b\\f\\v', '\b\f\v'],
    ['an escaped backslash', 'C:\\\\dir', 'C:\\dir'],
    ['octal escapes', '\\101\\102\\7', 'AB\x07'],
    ['hex escapes', '\\x41\\x4a\\xA', 'AJ\n'],
    ['octal escapes forming one UTF-8 character', '\\303\\251t\\303\\251', 'été'],
    ['hex escapes forming one UTF-8 character', '\\xe2\\x82\\xac', '€'],
    ['a backslash before any other character', '\\q\\x\\.', 'qx.'],
    ['bytea hex text', '\\\\x00ff10', '\\x00ff10'],
    ['multibyte text as is', 'héllo 日本 🎉', 'héllo 日本 🎉'],
  ])('reads %s', (_name, text, value) => {
    expect(parse(2, [Buffer.from(`${text}\tend\n`, 'utf8')])).toEqual([[value, 'end']]);
  });

  it('reads rows split at every byte, escapes and multibyte characters included', () => {
    const rows = [
      ['1', 'a\tb\\c\nd', null, 'é🎉€'],
      ['2', '', '\\N', 'x\u0001y'],
    ];
    for (const data of [encode(rows), encode(rows, 'octal'), encode(rows, 'hex')]) {
      for (let i = 0; i <= data.length; i++) expect(parse(4, cut(data, [i]))).toEqual(rows);
      const everyByte = Array.from({ length: data.length }, (_, i) => i);
      expect(parse(4, cut(data, everyByte))).toEqual(rows);
    }
  });

  it('gives back any rows, in any escaping, cut into any pieces (property)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    const tricky = fc.constantFrom('\\', '\t', '\n', '\r', '\b', '\f', '\v', '\\N', 'N', '', '€');
    const value = fc.oneof(text, tricky, fc.constant(null));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((columns) =>
          fc.tuple(
            fc.constant(columns),
            fc.array(fc.array(value, { minLength: columns, maxLength: columns }), {
              maxLength: 8,
            }),
          ),
        ),
        fc.constantFrom('none' as const, 'octal' as const, 'hex' as const),
        fc.array(fc.nat(), { maxLength: 10 }),
        ([columns, rows], bytes, cuts) => {
          const data = encode(rows, bytes);
          const at = cuts.map((c) => (data.length === 0 ? 0 : c % data.length));
          expect(parse(columns, cut(data, at))).toEqual(rows);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('waits for the rest of a row, and hands rows out one at a time', () => {
    const parser = new CopyTextParser(2);
    parser.push(Buffer.from('1\tone\n2\ttw'));
    expect(parser.nextRow()).toEqual(['1', 'one']);
    expect(parser.nextRow()).toBeNull();
    parser.push(Buffer.from('o\n3\tthree\n'));
    expect(parser.nextRow()).toEqual(['2', 'two']);
    expect(parser.nextRow()).toEqual(['3', 'three']);
    expect(parser.nextRow()).toBeNull();
    parser.end();
  });

  it('keeps rows not yet taken when more data arrives', () => {
    const parser = new CopyTextParser(1);
    parser.push(Buffer.from('a\nb\n'));
    expect(parser.nextRow()).toEqual(['a']);
    parser.push(Buffer.from('c\n'));
    expect([parser.nextRow(), parser.nextRow(), parser.nextRow()]).toEqual([['b'], ['c'], null]);
  });

  it('refuses a row with the wrong number of fields, naming the row', () => {
    const parser = new CopyTextParser(2);
    parser.push(Buffer.from('1\ta\n2\n'));
    expect(parser.nextRow()).toEqual(['1', 'a']);
    expect(() => parser.nextRow()).toThrow(new CopyFormatError('row 2 has 1 fields, expected 2'));
  });

  it('refuses data that ends inside a row or a row that ends in a lone backslash', () => {
    const truncated = new CopyTextParser(2);
    truncated.push(Buffer.from('1\ta\n2\tb'));
    expect(truncated.nextRow()).toEqual(['1', 'a']);
    expect(truncated.nextRow()).toBeNull();
    expect(() => truncated.end()).toThrow(CopyFormatError);
    const backslash = new CopyTextParser(1);
    backslash.push(Buffer.from('a\\\n'));
    expect(() => backslash.nextRow()).toThrow(/ends in a backslash/);
  });
});
