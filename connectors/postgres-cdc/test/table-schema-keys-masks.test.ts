import { describe, expect, it } from 'vitest';
import { ColumnMappers } from '../src/column-mappers.ts';
import { MessageKeyColumns } from '../src/message-key-columns.ts';
import { TableFilter } from '../src/table-filter.ts';
import { buildTableSchema, capturedColumnsOnly, rowKey, rowValue } from '../src/table-schema.ts';
import type { PgType, TypeRegistry } from '../src/type-registry.ts';

const base = (oid: number, name: string): PgType => ({
  oid,
  name,
  schema: 'pg_catalog',
  kind: 'b',
  elementOid: 0,
  baseOid: 0,
  baseTypmod: -1,
  isArray: false,
  enumLabels: null,
  delimiter: ',',
});
const TYPES = new Map<number, PgType>([
  [23, base(23, 'int4')],
  [25, base(25, 'text')],
  // A domain over varchar(4): masked as its base type is, and hashes cut to 4.
  [9001, { ...base(9001, 'code4'), schema: 'public', kind: 'd', baseOid: 1043, baseTypmod: 8 }],
  [1043, base(1043, 'varchar')],
]);
const registry = { get: (oid: number) => TYPES.get(oid) } as unknown as TypeRegistry;

/** public.t (skip text, id int4, region text, email text, code code4), skip excluded. */
function table(config: Record<string, string>, primaryKey = ['id']) {
  return buildTableSchema({
    topicPrefix: 'srv',
    id: { schema: 'public', table: 't' },
    relationOid: 1,
    replicaIdentity: 'default',
    columns: [
      { name: 'skip', typeOid: 25, typeMod: -1, isKey: false },
      { name: 'id', typeOid: 23, typeMod: -1, isKey: true },
      { name: 'region', typeOid: 25, typeMod: -1, isKey: false },
      { name: 'email', typeOid: 25, typeMod: -1, isKey: false },
      { name: 'code', typeOid: 9001, typeMod: -1, isKey: false },
    ],
    catalog: { notNull: new Set(['id', 'region']), primaryKey },
    registry,
    modes: {
      decimalHandlingMode: 'precise',
      timePrecisionMode: 'adaptive',
      messageKeyColumns: new MessageKeyColumns(config['message.key.columns'] ?? null),
      columnMappers: ColumnMappers.fromConfig(config).mappers,
    },
    filter: new TableFilter({
      schemaInclude: [],
      schemaExclude: [],
      tableInclude: [],
      tableExclude: [],
      columnInclude: [],
      columnExclude: ['public\\.t\\.skip'],
    }),
  });
}

const CONFIG = {
  'message.key.columns': 'public.t:region,id',
  'column.mask.with.3.chars': 'public.t.(region|email)',
  'column.mask.hash.MD5.with.salt.salt': 'public.t.code',
};

describe('table schemas with message.key.columns and masks (no database)', () => {
  it('keys by the named columns in their order, masking the value but not the key, from a pgoutput tuple', () => {
    const t = table(CONFIG);

    expect(t.keySchema?.fields?.map((f) => f.name)).toEqual(['region', 'id']);
    expect(rowKey(t, ['x', '1', 'eu', 'a@b.c', 'hello'])).toEqual({ region: 'eu', id: 1 });
    expect(rowValue(t, ['x', '1', 'eu', 'a@b.c', 'hello'])).toEqual({
      id: 1,
      region: '***',
      email: '***',
      // MD5 of "salt" + Java's serialization of "hello" (Debezium's MaskStringsTest), cut to varchar(4).
      code: '46f4',
    });
  });

  it('reads a snapshot row (captured columns only) into the same key and value', () => {
    const t = capturedColumnsOnly(table(CONFIG));

    expect(rowKey(t, ['1', 'eu', 'a@b.c', null])).toEqual({ region: 'eu', id: 1 });
    expect(rowValue(t, ['1', 'eu', 'a@b.c', null])).toEqual({
      id: 1,
      region: '***',
      email: '***',
      code: null,
    });
  });

  it('gives a table without a primary key a key, and keeps the primary key of tables no entry names', () => {
    expect(table(CONFIG, []).keySchema?.fields?.map((f) => f.name)).toEqual(['region', 'id']);
    expect(
      table({ 'message.key.columns': 'public.other:email' }).keySchema?.fields?.map((f) => f.name),
    ).toEqual(['id']);
    expect(
      table({ 'message.key.columns': 'public.t:skip' }).keySchema?.fields?.map((f) => f.name),
    ).toEqual(['id']);
  });
});
