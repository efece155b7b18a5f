/**
 * Debezium's semantic types as native Parquet logical types (parquet.debezium.logical.types),
 * read back by DuckDB: DESCRIBE shows real types (TIMESTAMP WITH TIME ZONE, TIME WITH
 * TIME ZONE, UUID, JSON, DECIMAL(38, s)) and the values equal what the strings and
 * structs said, on both the flat path (flat-parquet-encoder.ts, every CDC row) and the
 * nested one (hyparquet-writer, a row with an array column); `as-is` keeps the
 * physical types; values that would lose digits fail the row, naming the column.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Schema, Schemas, unscaledToBytes } from '../../../src/connect/api/index.ts';
import { useTmpDir } from '../../../test/helpers/tmp-dir.ts';
import { DEFAULT_SEMANTIC_TYPES, type SemanticTypes } from '../debezium-types.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { RowError } from '../row-error.ts';
import { toParquetSchema } from '../schema-mapping.ts';
import { query } from './duckdb.ts';

const named = (schema: Schema, name: string): Schema => ({ ...schema, name, version: 1 });

const variableScaleDecimal = named(
  Schemas.struct([
    ['scale', Schemas.int32()],
    ['value', Schemas.bytes()],
  ]),
  'io.debezium.data.VariableScaleDecimal',
);

const columns: Array<[string, Schema]> = [
  ['ts', named(Schemas.string({ optional: true }), 'io.debezium.time.ZonedTimestamp')],
  ['t', named(Schemas.string(), 'io.debezium.time.ZonedTime')],
  ['id', named(Schemas.string(), 'io.debezium.data.Uuid')],
  ['doc', named(Schemas.string(), 'io.debezium.data.Json')],
  ['n', variableScaleDecimal],
];

const vsd = (unscaled: bigint, scale: number) => ({ scale, value: unscaledToBytes(unscaled) });

const rows = [
  {
    ts: '2024-05-01T10:15:30.123456Z',
    t: '10:15:30.5Z',
    id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    doc: '{"a":[1,2],"big":12345678901234567890}',
    n: vsd(12345n, 2),
  },
  {
    ts: '1969-12-31T23:00:00+02:00',
    t: '23:30:00-01:00',
    id: '00000000-0000-0000-0000-000000000000',
    doc: '{}',
    n: vsd(-5n, 0),
  },
  {
    ts: null,
    t: '00:00:00Z',
    id: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    doc: '[]',
    n: vsd(1n, 10),
  },
];

function writeFile(
  dir: string,
  schema: Schema,
  values: Record<string, unknown>[],
  types?: SemanticTypes,
): string {
  const mapped = toParquetSchema(schema, types ? { types } : {});
  const buffer = new RowBuffer(mapped);
  for (const v of values) buffer.append(v);
  const path = join(dir, `f${Math.random().toString(36).slice(2)}.parquet`);
  writeFileSync(path, encodeParquet(mapped, buffer.take(), { codec: 'snappy', kv: [] }));
  return path;
}

async function describeTypes(path: string): Promise<Record<string, string>> {
  const described = await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  return Object.fromEntries(described.map((r) => [r.column_name, r.column_type]));
}

const expectedValues = [
  {
    ts: String(Date.UTC(2024, 4, 1, 10, 15, 30) * 1000 + 123456),
    t: '10:15:30.5+00',
    id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    doc: '{"a":[1,2],"big":12345678901234567890}',
    n: '123.4500000000',
  },
  {
    ts: String(-3 * 3600 * 1_000_000),
    t: '00:30:00+00',
    id: '00000000-0000-0000-0000-000000000000',
    doc: '{}',
    n: '-5.0000000000',
  },
  {
    ts: null,
    t: '00:00:00+00',
    id: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    doc: '[]',
    n: '0.0000000001',
  },
];

const valuesSql = (path: string) =>
  `SELECT epoch_us(ts)::VARCHAR AS ts, t::VARCHAR AS t, id::VARCHAR AS id, doc::VARCHAR AS doc,
          n::VARCHAR AS n FROM read_parquet('${path}')`;

describe("Debezium's semantic types in the lake", () => {
  it('are native logical types on the flat path, with the values the strings and structs said', async () => {
    const path = writeFile(useTmpDir(), Schemas.struct(columns), rows);

    expect(await describeTypes(path)).toEqual({
      ts: 'TIMESTAMP WITH TIME ZONE',
      t: 'TIME WITH TIME ZONE',
      id: 'UUID',
      doc: 'JSON',
      n: 'DECIMAL(38,10)',
    });
    expect(await query(valuesSql(path))).toEqual(expectedValues);
  });

  it('are the same types and values on the nested path', async () => {
    const schema = Schemas.struct([...columns, ['tags', Schemas.array(Schemas.string())]]);
    const path = writeFile(
      useTmpDir(),
      schema,
      rows.map((r) => ({ ...r, tags: ['x'] })),
    );

    expect(await describeTypes(path)).toMatchObject({
      ts: 'TIMESTAMP WITH TIME ZONE',
      t: 'TIME WITH TIME ZONE',
      id: 'UUID',
      doc: 'JSON',
      n: 'DECIMAL(38,10)',
    });
    expect(await query(valuesSql(path))).toEqual(expectedValues);
  });

  it('writes VariableScaleDecimal as DOUBLE when asked', async () => {
    const types: SemanticTypes = {
      ...DEFAULT_SEMANTIC_TYPES,
      variableScaleDecimal: { mode: 'double' },
    };
    const path = writeFile(
      useTmpDir(),
      Schemas.struct([['n', variableScaleDecimal]]),
      [{ n: vsd(12345n, 2) }],
      types,
    );

    expect(await describeTypes(path)).toEqual({ n: 'DOUBLE' });
    expect(await query(`SELECT n FROM read_parquet('${path}')`)).toEqual([{ n: 123.45 }]);
  });

  it("keeps the physical types with as-is, as Confluent's sink writes them", async () => {
    const types: SemanticTypes = { ...DEFAULT_SEMANTIC_TYPES, debeziumTypes: 'as-is' };
    const path = writeFile(useTmpDir(), Schemas.struct(columns), rows, types);

    expect(await describeTypes(path)).toEqual({
      ts: 'VARCHAR',
      t: 'VARCHAR',
      id: 'VARCHAR',
      doc: 'VARCHAR',
      n: 'STRUCT(scale INTEGER, "value" BLOB)',
    });
  });

  it('writes Postgres infinity timestamps as DuckDB infinite timestamps', async () => {
    const schema = Schemas.struct([columns[0] as [string, Schema]]);
    const path = writeFile(useTmpDir(), schema, [{ ts: 'infinity' }, { ts: '-infinity' }]);

    expect(await query(`SELECT ts::VARCHAR AS ts FROM read_parquet('${path}')`)).toEqual([
      { ts: 'infinity' },
      { ts: '-infinity' },
    ]);
  });

  it('fails a row that would lose digits, naming the column and the key that keeps it', () => {
    const buffer = new RowBuffer(toParquetSchema(Schemas.struct(columns)));
    const good = rows[0] as Record<string, unknown>;

    expect(() => buffer.append({ ...good, ts: '2024-05-01T10:15:30.123456789Z' })).toThrow(
      new RowError(
        "column 'ts': 2024-05-01T10:15:30.123456789Z has digits below a microsecond, which a Parquet TIMESTAMP(MICROS) cannot hold; set parquet.debezium.logical.types=as-is to write the text as it is",
      ),
    );
    expect(() => buffer.append({ ...good, n: vsd(1n, 11) })).toThrow(
      /column 'n': a value of scale 11 does not fit DECIMAL\(38, 10\) without rounding; raise parquet\.variable\.scale\.decimal\.scale/,
    );
    expect(() => buffer.append({ ...good, id: 'not-a-uuid' })).toThrow(
      /column 'id': 'not-a-uuid' is not a UUID/,
    );
    buffer.append({ ...good, ts: '2024-05-01T10:15:30.123456000Z', n: vsd(100n, 12) });
    expect(buffer.rows).toBe(1);
  });
});
