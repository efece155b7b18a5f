/**
 * Row readers: a table's column plan compiled into one function that turns a tuple of
 * column texts (a pgoutput tuple or a COPY row) into the struct value of an event
 * (`.Value` or `.Key`).
 *
 * Why compiled: this runs for every column of every row change, and is most of the
 * connector's CPU time. A generic loop (`row[c.name] = c.mapping.fromText(text)`) makes
 * each property store a keyed store that walks hidden-class transitions, and each
 * converter call one megamorphic call site shared by every type. The function built
 * here, once per table schema, returns an object literal with the column names as
 * fixed keys: every struct of the table is allocated in one step with one hidden
 * class, and every column has its own call site, which V8 can inline. The same
 * technique as src/protocol/codec.ts. Column names enter the source text only as JSON
 * string literals, converters only as values passed in, so no catalog text is ever
 * evaluated as code.
 */
import type { ColumnValue, UNCHANGED_TOAST } from './pgoutput-decoder.ts';

export type RowReader = (tuple: readonly ColumnValue[]) => Record<string, unknown>;

export interface ReaderColumn {
  name: string;
  /** Index of the column's text in the tuple. */
  position: number;
  /** The value of a column Postgres sent as text. */
  fromText(text: string): unknown;
  /** The value when it sent none: null (SQL NULL), unchanged TOAST, or a short tuple. */
  missing(value: null | undefined | typeof UNCHANGED_TOAST): unknown;
}

export function compileRowReader(columns: readonly ReaderColumn[]): RowReader {
  const fields = columns.map((c, i) => {
    // `"__proto__": x` in a literal would set the prototype; a computed key defines a field.
    const key = c.name === '__proto__' ? '["__proto__"]' : JSON.stringify(c.name);
    return `${key}: typeof (v = t[${c.position}]) === 'string' ? f[${i}](v) : m[${i}](v)`;
  });
  const factory = new Function(
    'f',
    'm',
    `"use strict";\nreturn function readRow(t) {\nlet v;\nreturn {\n${fields.join(',\n')}\n};\n};`,
  );
  return factory(
    columns.map((c) => c.fromText),
    columns.map((c) => c.missing),
  ) as RowReader;
}
