import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Schemas } from '../../../src/connect/api/index.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { toParquetSchema } from '../schema-mapping.ts';
import { query } from './duckdb.ts';
import { cents, orderSchema, orderValue, T0 } from './fixtures.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'schema-mapping-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeFile(schema: Parameters<typeof toParquetSchema>[0], values: unknown[]): string {
  const mapped = toParquetSchema(schema);
  const buffer = new RowBuffer(mapped);
  for (const v of values) buffer.append(v);
  const path = join(dir, 'f.parquet');
  writeFileSync(path, encodeParquet(mapped, buffer.take(), { codec: 'snappy', kv: [] }));
  return path;
}

async function describeTypes(path: string): Promise<Record<string, string>> {
  const rows = await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  return Object.fromEntries(rows.map((r) => [r.column_name as string, r.column_type as string]));
}

describe('Connect schema to Parquet mapping', () => {
  it('maps a Debezium row with logical types to the DuckDB types a reader expects', async () => {
    const path = writeFile(
      orderSchema,
      Array.from({ length: 10 }, (_, i) => orderValue(i)),
    );
    expect(await describeTypes(path)).toEqual({
      id: 'BIGINT',
      customer: 'VARCHAR',
      status: 'VARCHAR',
      amount: 'DECIMAL(10,2)',
      created_on: 'DATE',
      updated_at: 'TIMESTAMP',
      shipped_at: 'TIMESTAMP',
      __op: 'VARCHAR',
      __deleted: 'VARCHAR',
    });
    const [row] = await query(
      `SELECT id, amount::VARCHAR AS amount, created_on::VARCHAR AS d, updated_at::VARCHAR AS u,
              shipped_at::VARCHAR AS s, status FROM read_parquet('${path}') WHERE id = 1004`,
    );
    expect(row).toEqual({
      id: 1004n,
      amount: '-0.96',
      d: '2024-10-05', // day 20001
      u: '2026-11-28 22:34:00',
      s: '2026-11-28 22:34:00',
      status: 'PAID',
    });
  });

  it('maps primitives, int8/int16, floats, bytes, Connect Date/Time/Timestamp', async () => {
    const schema = Schemas.struct([
      ['i8', Schemas.int8()],
      ['i16', Schemas.int16()],
      ['f32', Schemas.float32()],
      ['f64', Schemas.float64()],
      ['b', Schemas.boolean()],
      ['raw', Schemas.bytes({ optional: true })],
      ['d', Schemas.date()],
      ['t', Schemas.time()],
      ['ts', Schemas.timestamp()],
      ['big', Schemas.int64()],
    ]);
    const path = writeFile(schema, [
      {
        i8: -8,
        i16: 300,
        f32: 1.5,
        f64: 2.25,
        b: true,
        raw: new Uint8Array([1, 2]),
        d: 1,
        t: 3_600_000,
        ts: T0,
        big: 2n ** 60n,
      },
    ]);
    expect(await describeTypes(path)).toEqual({
      i8: 'TINYINT',
      i16: 'SMALLINT',
      f32: 'FLOAT',
      f64: 'DOUBLE',
      b: 'BOOLEAN',
      raw: 'BLOB',
      d: 'DATE',
      t: 'TIME',
      ts: 'TIMESTAMP',
      big: 'BIGINT',
    });
    const [row] = await query(
      `SELECT d::VARCHAR AS d, t::VARCHAR AS t, big, octet_length(raw) AS n FROM read_parquet('${path}')`,
    );
    expect(row).toEqual({ d: '1970-01-02', t: '01:00:00', big: 2n ** 60n, n: 2n });
  });

  it('maps structs to groups, arrays to LIST and maps to MAP, with optional members', async () => {
    const schema = Schemas.struct([
      ['id', Schemas.int32()],
      [
        'source',
        Schemas.struct([
          ['db', Schemas.string()],
          ['lsn', Schemas.int64({ optional: true })],
          ['price', { ...Schemas.decimal(2), optional: true }],
        ]),
      ],
      ['tags', Schemas.array(Schemas.string(), { optional: true })],
      [
        'attrs',
        Schemas.map(Schemas.string(), Schemas.int64({ optional: true }), { optional: true }),
      ],
    ]);
    const path = writeFile(schema, [
      {
        id: 1,
        source: { db: 'shop', lsn: 42, price: cents(1999) },
        tags: ['a', 'b'],
        attrs: new Map([
          ['x', 1],
          ['y', null],
        ]),
      },
      { id: 2, source: { db: 'shop', lsn: null, price: null }, tags: [], attrs: { z: 3 } },
      { id: 3, source: { db: 'crm', lsn: 7, price: null }, tags: null, attrs: null },
    ]);
    expect(await describeTypes(path)).toEqual({
      id: 'INTEGER',
      source: 'STRUCT(db VARCHAR, lsn BIGINT, price DECIMAL(38,2))',
      tags: 'VARCHAR[]',
      attrs: 'MAP(VARCHAR, BIGINT)',
    });
    const rows = await query(
      `SELECT id, source.db AS db, source.lsn AS lsn, source.price::VARCHAR AS price,
              tags::VARCHAR AS tags, attrs::VARCHAR AS attrs FROM read_parquet('${path}') ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 1, db: 'shop', lsn: 42n, price: '19.99', tags: '[a, b]', attrs: '{x=1, y=NULL}' },
      { id: 2, db: 'shop', lsn: null, price: null, tags: '[]', attrs: '{z=3}' },
      { id: 3, db: 'crm', lsn: 7n, price: null, tags: null, attrs: null },
    ]);
  });

  it('writes a non-struct value as one column named value', async () => {
    const path = writeFile(Schemas.string(), ['a', 'b']);
    expect(await query(`SELECT value FROM read_parquet('${path}') ORDER BY 1`)).toEqual([
      { value: 'a' },
      { value: 'b' },
    ]);
  });

  it('refuses a required column without a value, naming it, and keeps earlier rows intact', () => {
    const mapped = toParquetSchema(
      Schemas.struct([
        ['a', Schemas.int32()],
        ['b', Schemas.string()],
      ]),
    );
    const buffer = new RowBuffer(mapped);
    buffer.append({ a: 1, b: 'x' });
    expect(() => buffer.append({ a: 2 })).toThrow(/column 'b' is required/);
    expect(buffer.rows).toBe(1);
    const taken = buffer.take();
    if (taken.layout !== 'flat') throw new Error('a flat schema buffers flat columns');
    expect(taken.columns.map((c) => c.rows)).toEqual([1, 1]);
    expect(taken.columns[0]).toMatchObject({ kind: 'int32', values: new Int32Array([1]) });
  });
});
