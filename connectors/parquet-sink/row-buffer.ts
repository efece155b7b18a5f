/**
 * Rows buffered as columns until a file is written.
 *
 * hyparquet-writer encodes from column arrays, so rows are transposed as they
 * arrive (one push per column, values already converted for the encoder) rather
 * than kept as objects and transposed at flush: that keeps the per-file peak to one
 * copy of the data, and the memory estimate honest.
 *
 * The byte estimate samples one row in SAMPLE_EVERY and multiplies: walking every
 * value would cost as much as encoding it, and the cap it feeds (a per-task memory
 * budget) only needs to be right within tens of percent.
 */
import type { ParquetSchema } from './schema-mapping.ts';

/** One row in 64 is measured; CDC rows of a table are alike, so this is enough. */
const SAMPLE_EVERY = 64;
/** What a JS value costs beyond its payload (array slot, boxing): a rough constant. */
const VALUE_OVERHEAD = 8;

export class RowBuffer {
  private readonly data: unknown[][];
  private count = 0;
  private sampledBytes = 0;
  private sampledRows = 0;

  constructor(readonly schema: ParquetSchema) {
    this.data = schema.columns.map(() => []);
  }

  get rows(): number {
    return this.count;
  }

  /** Approximate heap bytes held by the buffered values. */
  get estimatedBytes(): number {
    if (this.sampledRows === 0) return 0;
    return Math.round((this.sampledBytes / this.sampledRows) * this.count);
  }

  /**
   * Append a row: `value` is the record value (a struct object, or the single value
   * of a non-struct schema; null writes nulls) and `extras` the extra columns' values
   * (Kafka key, headers) in the order the schema declares them.
   */
  append(value: unknown, extras: readonly unknown[] = []): void {
    const columns = this.schema.columns;
    const valueColumns = columns.length - extras.length;
    const isStruct = this.schema.valueSchema.type === 'struct';
    const obj = value as Record<string, unknown> | null;
    const sample = this.count % SAMPLE_EVERY === 0;
    let bytes = 0;
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as (typeof columns)[number];
      const raw =
        i >= valueColumns
          ? extras[i - valueColumns]
          : obj === null || obj === undefined
            ? null
            : isStruct
              ? obj[column.name]
              : value;
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

  /**
   * The same rows under a grown schema (schema-evolution.ts): columns keep their
   * arrays by name, new columns start with a null per buffered row.
   */
  withSchema(schema: ParquetSchema): RowBuffer {
    const next = new RowBuffer(schema);
    const byName = new Map(this.schema.columns.map((c, i) => [c.name, this.data[i] as unknown[]]));
    schema.columns.forEach((c, i) => {
      next.data[i] = byName.get(c.name) ?? new Array<unknown>(this.count).fill(null);
    });
    next.count = this.count;
    next.sampledBytes = this.sampledBytes;
    next.sampledRows = this.sampledRows;
    return next;
  }

  /** Undo a half-appended row so the columns keep equal lengths. */
  private rollback(columnsPushed: number): void {
    for (let j = 0; j < columnsPushed; j++) (this.data[j] as unknown[]).pop();
  }

  /** The buffered columns, in schema order, for the encoder. */
  columns(): unknown[][] {
    return this.data;
  }
}

export class RowError extends Error {
  readonly kind = 'row';
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
