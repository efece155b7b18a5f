/**
 * Columns whose type has no mapping (type-mapping.ts's mapColumn returns null:
 * multiranges, tsquery, pg_lsn, txid_snapshot, composite types, extension types Debezium
 * does not know, arrays of any of them). Such a column is never left out of the events
 * silently:
 *   include.unknown.datatypes=false (default)  the connector's and the task's start
 *       fail naming table, column and type (unmappedColumns, from the catalog), and a
 *       Relation message or snapshot table that brings one fails the task
 *       (UnknownDatatypeError from requireMapping).
 *   include.unknown.datatypes=true  the column is sent as Debezium sends it: schema
 *       BYTES (optional when the column is nullable), the value the bytes of the text
 *       Postgres sends for it (PostgresValueConverter falls back to SchemaBuilder.bytes()
 *       and convertBinary of the value; pgoutput and COPY both give the text form),
 *       encoded as UTF-8 (what String.getBytes() gives on a UTF-8 JVM), and sent as
       binary.handling.mode says (BYTES, or a base64 / hex STRING), as Debezium's
       binaryMode.getSchema() and convertBinary do.
 * Debezium itself drops the column with a warning when the key is false; we fail
 * instead, since a column that vanishes from every event is data lost without a trace.
 */
import type pg from 'pg';
import { ConnectException } from '../../../src/connect/api/index.ts';
import { binaryEncoding } from './binary-values.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import {
  type ColumnMapping,
  type ColumnRef,
  type MappingModes,
  mapColumn,
} from './type-mapping.ts';
import type { TypeRegistry } from './type-registry.ts';

export const INCLUDE_UNKNOWN_DATATYPES = 'include.unknown.datatypes';

export interface UnmappedColumn extends ColumnRef {
  /** The type as a user would write it (`money`, `int4range[]`, `public.hstore`). */
  type: string;
}

/** A captured column whose type has no mapping while include.unknown.datatypes=false. Fatal. */
export class UnknownDatatypeError extends ConnectException {
  constructor(readonly columns: readonly UnmappedColumn[]) {
    super(unknownDatatypeMessage(columns));
    this.name = 'UnknownDatatypeError';
  }
}

export function unknownDatatypeMessage(columns: readonly UnmappedColumn[]): string {
  const named = columns
    .map((c) => `table ${c.table.schema}.${c.table.table}, column ${c.column} (type ${c.type})`)
    .join('; ');
  return (
    `The connector has no mapping for the type of ${named}. Set ${INCLUDE_UNKNOWN_DATATYPES}=true ` +
    "to send such columns as bytes of Postgres' text form, or leave them out of the events " +
    'with column.exclude.list'
  );
}

/** The type's name as a user writes it, schema-qualified outside pg_catalog. */
export function typeName(registry: TypeRegistry, oid: number): string {
  const t = registry.get(oid);
  if (!t) return `oid ${oid}`;
  if (t.isArray && t.elementOid !== 0) return `${typeName(registry, t.elementOid)}[]`;
  return t.schema === 'pg_catalog' ? t.name : `${t.schema}.${t.name}`;
}

/** Debezium's mapping of an unknown type: the text form's bytes, per binary.handling.mode. */
function textBytes(modes: MappingModes): ColumnMapping {
  const encoding = binaryEncoding(modes.binaryHandlingMode ?? 'bytes');
  return { schema: encoding.schema, fromText: (s) => encoding.encode(Buffer.from(s, 'utf8')) };
}

/**
 * The column's mapping; for a type with none, the text-bytes mapping when
 * modes.includeUnknownDatatypes, else an UnknownDatatypeError.
 */
export function requireMapping(
  registry: TypeRegistry,
  oid: number,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping {
  const mapping = mapColumn(registry, oid, typmod, modes, where);
  if (mapping) return mapping;
  if (modes.includeUnknownDatatypes) return textBytes(modes);
  throw new UnknownDatatypeError([{ ...where, type: typeName(registry, oid) }]);
}

/**
 * The captured columns of `tables` whose type has no mapping, read from the catalog
 * (for the start-up check). `registry` must read the same database.
 */
export async function unmappedColumns(
  client: pg.Client,
  registry: TypeRegistry,
  tables: readonly TableId[],
  filter: TableFilter,
  modes: MappingModes,
): Promise<UnmappedColumn[]> {
  if (tables.length === 0) return [];
  const result = await client.query<{
    schema: string;
    table: string;
    column: string;
    oid: number;
    typmod: number;
  }>(
    `SELECT t.schema, t.tbl AS table, a.attname AS column, a.atttypid::int AS oid, a.atttypmod AS typmod
       FROM unnest($1::text[], $2::text[]) AS t(schema, tbl)
       JOIN pg_namespace n ON n.nspname = t.schema
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tbl
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY 1, 2, a.attnum`,
    [tables.map((t) => t.schema), tables.map((t) => t.table)],
  );
  await registry.load();
  const unmapped: UnmappedColumn[] = [];
  for (const r of result.rows) {
    const table = { schema: r.schema, table: r.table };
    if (!filter.includesColumn(table, r.column)) continue;
    const where = { table, column: r.column };
    if (mapColumn(registry, Number(r.oid), Number(r.typmod), modes, where) === null)
      unmapped.push({ ...where, type: typeName(registry, Number(r.oid)) });
  }
  return unmapped;
}
