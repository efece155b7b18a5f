/**
 * Rows buffered as columns until a file is written.
 *
 * Rows are transposed as they arrive (one append per column) rather than kept as
 * objects and transposed at flush: that keeps the per-file peak to one copy of the
 * data, and the memory estimate honest. Two layouts:
 *   - flat: every column is primitive (every CDC row after ExtractNewRecordState).
 *     Each column is a typed-array builder (flat-columns.ts), rows are appended by a
 *     function compiled for the schema (a property read per column at its own site,
 *     where one loop over names would be a slow lookup by key), the byte count is
 *     exact, and flat-parquet-encoder.ts writes the file.
 *   - values: a nested column (struct, array, map). Columns are JS
 *     arrays of values converted for hyparquet-writer, and the byte estimate samples
 *     one row in SAMPLE_EVERY: walking every value would cost as much as encoding it,
 *     and the cap it feeds (a per-task memory budget) only needs to be right within
 *     tens of percent.
 * A schema that evolves from flat to nested (schema-evolution.ts) turns the buffered
 * flat columns into values.
 */
import { type ColumnBuilder, type FlatColumnData, newBuilder, RowError } from './flat-columns.ts';
import type { ParquetSchema } from './schema-mapping.ts';

/** One row in 64 is measured; CDC rows of a table are alike, so this is enough. */
const SAMPLE_EVERY = 64;
/** What a JS value costs beyond its payload (array slot, boxing): a rough constant. */
const VALUE_OVERHEAD = 8;

/** What a buffer hands to the encoder (parquet-encoder.ts). */
export type BufferedColumns =
  | { layout: 'flat'; columns: FlatColumnData[] }
  | { layout: 'values'; columns: unknown[][] };

type FlatAppend = (value: unknown, columns: ColumnBuilder[]) => void;

export class RowBuffer {
  /** Flat layout: a builder per column; undefined in the values layout. */
  private builders: ColumnBuilder[] | undefined;
  private appendFlat: FlatAppend | undefined;
  /** Values layout: a JS array per column. */
  private data: unknown[][] = [];
  private count = 0;
  private sampledBytes = 0;
  private sampledRows = 0;

  constructor(readonly schema: ParquetSchema) {
    if (isFlat(schema)) {
      this.builders = schema.columns.map((c) =>
        newBuilder(c.schema, c.name, c.optional, schema.types),
      );
      this.appendFlat = compileAppend(schema);
    } else {
      this.data = schema.columns.map(() => []);
    }
  }

  get rows(): number {
    return this.count;
  }

  /** Heap bytes held by the buffered values: exact when flat, estimated otherwise. */
  get estimatedBytes(): number {
    if (this.builders !== undefined) {
      let bytes = 0;
      for (const b of this.builders) bytes += b.bytes;
      return bytes;
    }
    if (this.sampledRows === 0) return 0;
    return Math.round((this.sampledBytes / this.sampledRows) * this.count);
  }

  /**
   * Append a row: `value` is the record value (a struct object, or the single value
   * of a non-struct schema; null writes nulls).
   */
  append(value: unknown): void {
    const builders = this.builders;
    if (builders !== undefined) {
      try {
        (this.appendFlat as FlatAppend)(value, builders);
      } catch (e) {
        for (const b of builders) if (b.rows > this.count) b.truncate(this.count);
        throw e;
      }
      this.count++;
      return;
    }
    this.appendValues(value);
  }

  /**
   * Remove the last row appended: a record whose keys or headers row failed after its
   * value row was appended (record-views.ts), so the files of a set stay aligned. The
   * sampled byte estimate keeps the row's sample, if it had one: it stays an estimate.
   */
  dropLast(): void {
    if (this.count === 0) return;
    this.count--;
    if (this.builders !== undefined) {
      for (const b of this.builders) b.truncate(this.count);
      return;
    }
    for (const column of this.data) column.pop();
  }

  /**
   * The same rows under a grown schema (schema-evolution.ts): columns keep their
   * data by name, new columns start with a null per buffered row.
   */
  withSchema(schema: ParquetSchema): RowBuffer {
    const next = new RowBuffer(schema);
    next.count = this.count;
    if (next.builders !== undefined && this.builders !== undefined) {
      const byName = new Map(this.builders.map((b) => [b.name, b]));
      next.builders = schema.columns.map((c, i) => {
        const kept = byName.get(c.name);
        if (kept !== undefined) {
          kept.optional = c.optional;
          return kept;
        }
        const fresh = (next.builders as ColumnBuilder[])[i] as ColumnBuilder;
        for (let r = 0; r < this.count; r++) fresh.appendNull();
        return fresh;
      });
      return next;
    }
    // To (or within) the values layout.
    const byName = new Map<string, unknown[]>();
    if (this.builders !== undefined) {
      this.schema.columns.forEach((c, i) => {
        const values = (this.builders as ColumnBuilder[])[i]?.values() ?? [];
        const convert = c.convert;
        byName.set(c.name, convert ? values.map((v) => (v === null ? v : convert(v))) : values);
      });
    } else {
      for (const [i, c] of this.schema.columns.entries()) {
        byName.set(c.name, this.data[i] as unknown[]);
      }
    }
    next.data = schema.columns.map(
      (c) => byName.get(c.name) ?? new Array<unknown>(this.count).fill(null),
    );
    const bytes = this.estimatedBytes;
    next.sampledRows = this.builders !== undefined ? this.count : this.sampledRows;
    next.sampledBytes = this.builders !== undefined ? bytes : this.sampledBytes;
    return next;
  }

  /** The buffered columns, in schema order, handed to the encoder for good. */
  take(): BufferedColumns {
    if (this.builders !== undefined) {
      return { layout: 'flat', columns: this.builders.map((b) => b.take()) };
    }
    return { layout: 'values', columns: this.data };
  }

  private appendValues(value: unknown): void {
    const columns = this.schema.columns;
    const isStruct = this.schema.valueSchema.type === 'struct';
    const obj = value as Record<string, unknown> | null;
    const sample = this.count % SAMPLE_EVERY === 0;
    let bytes = 0;
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as (typeof columns)[number];
      const raw = obj === null || obj === undefined ? null : isStruct ? obj[column.name] : value;
      const v = raw ?? null;
      if (v === null && !column.optional) {
        this.rollback(i);
        throw new RowError(`column '${column.name}' is required but the record has no value`);
      }
      try {
        (this.data[i] as unknown[]).push(column.convert && v !== null ? column.convert(v) : v);
      } catch (e) {
        this.rollback(i);
        throw new RowError(`column '${column.name}': ${(e as Error).message}`);
      }
      if (sample) bytes += estimateValue(v);
    }
    if (sample) {
      this.sampledBytes += bytes;
      this.sampledRows++;
    }
    this.count++;
  }

  /** Undo a half-appended row so the columns keep equal lengths. */
  private rollback(columnsPushed: number): void {
    for (let j = 0; j < columnsPushed; j++) (this.data[j] as unknown[]).pop();
  }
}

/** Whether every column of the schema has a flat builder. */
function isFlat(schema: ParquetSchema): boolean {
  return schema.columns.every((c) => c.flat !== undefined);
}

/**
 * The row appender of a flat schema: for each column, read its value (the struct's
 * field, or the whole value of a non-struct schema), then append it or a
 * null. Names are JSON string literals in the generated code.
 */
function compileAppend(schema: ParquetSchema): FlatAppend {
  const columns = schema.columns;
  const isStruct = schema.valueSchema.type === 'struct';
  const lines = columns.map((c, i) => {
    const read = isStruct ? `o == null ? null : o[${JSON.stringify(c.name)}]` : 'o';
    return `v = ${read};\nif (v == null) c[${i}].appendNull(); else c[${i}].append(v);`;
  });
  return new Function('o', 'c', `"use strict";\nlet v;\n${lines.join('\n')}`) as FlatAppend;
}

function estimateValue(v: unknown): number {
  if (v === null || v === undefined) return VALUE_OVERHEAD;
  switch (typeof v) {
    case 'string':
      return VALUE_OVERHEAD + 16 + v.length * 2;
    case 'number':
    case 'boolean':
      return VALUE_OVERHEAD;
    case 'bigint':
      return VALUE_OVERHEAD + 16;
    case 'object': {
      if (v instanceof Uint8Array) return VALUE_OVERHEAD + 64 + v.byteLength;
      let bytes = VALUE_OVERHEAD + 32;
      const values = v instanceof Map ? [...v.keys(), ...v.values()] : Object.values(v);
      for (const x of values) bytes += estimateValue(x);
      return bytes;
    }
    default:
      return VALUE_OVERHEAD;
  }
}
