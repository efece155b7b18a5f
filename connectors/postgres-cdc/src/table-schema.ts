/**
 * A captured table as events describe it: its topic (topic.naming.strategy,
 * topic-naming.ts), its Connect key and value schemas (`<topic>.Key` / `.Value`, named
 * as schema.name.adjustment.mode says, with one field per column named as
 * field.name.adjustment.mode says: name-adjustment.ts), and how a row of column texts
 * (a pgoutput tuple or a snapshot row) becomes their struct values.
 *
 * Built from pgoutput's Relation message (column names, type OIDs, typmods; sent
 * before a table's first change and again after every ALTER TABLE, so the schema
 * follows DDL mid-stream) plus the catalog facts the message lacks: NOT NULL and the
 * primary key. The key is the columns message.key.columns names for the table
 * (message-key-columns.ts); else the primary key; without one, the replica identity
 * index's columns (REPLICA IDENTITY USING INDEX); otherwise there is no key (null key).
 * Columns that column.exclude.list removes are left out of both; a column whose type
 * has no mapping is sent as bytes with include.unknown.datatypes and otherwise fails
 * the build (UnknownDatatypeError, unknown-datatypes.ts). Column masks and truncation
 * (column-mappers.ts) change the value's columns, never the key's, as in Debezium: a
 * key column has one CapturedColumn in `columns` (masked) and another in `keyColumns`.
 */
import type pg from 'pg';
import { ConnectException, type Schema, Schemas } from '../../../src/connect/api/index.ts';
import type { ColumnTransform, MappedColumn } from './column-mappers.ts';
import { envelopeSchema } from './envelope-schema.ts';
import { fieldNameOf } from './naming-config.ts';
import {
  type ColumnValue,
  type RelationColumn,
  type ReplicaIdentity,
  UNCHANGED_TOAST,
} from './pgoutput-decoder.ts';
import { compileRowReader, type ReaderColumn, type RowReader } from './row-reader.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import type { ColumnMapping, MappingModes } from './type-mapping.ts';
import type { TypeRegistry } from './type-registry.ts';
import { requireMapping, UnknownDatatypeError, type UnmappedColumn } from './unknown-datatypes.ts';

/** Debezium's placeholder for a TOASTed column Postgres did not send. */
export const UNAVAILABLE_VALUE = '__debezium_unavailable_value';

export interface CapturedColumn {
  /** The column's name in Postgres (what queries name). */
  name: string;
  /** Its field in the key and value structs: `name` as field.name.adjustment.mode makes it. */
  field: string;
  /** Position in the tuple Postgres sends. */
  position: number;
  mapping: ColumnMapping;
  optional: boolean;
  schema: Schema;
  /** A column mapper's change of the value (column-mappers.ts); value columns only. */
  transform?: ColumnTransform['apply'];
}

export interface TableSchema {
  id: TableId;
  relationOid: number;
  topic: string;
  columns: CapturedColumn[];
  keyColumns: CapturedColumn[];
  keySchema: Schema | null;
  valueSchema: Schema;
  /** The `.Envelope` schema of the table's change events. */
  envelopeSchema: Schema;
  /** Compiled from `columns` and `keyColumns` (row-reader.ts); null without a key. */
  readValue: RowReader;
  readKey: RowReader | null;
}

export interface CatalogColumns {
  notNull: Set<string>;
  primaryKey: string[];
}

/** NOT NULL columns and primary key columns of a table, from the catalog. */
export async function readCatalogColumns(
  client: pg.Client,
  relationOid: number,
): Promise<CatalogColumns> {
  const result = await client.query(
    `SELECT a.attname, a.attnotnull,
            EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisprimary AND a.attnum = ANY(i.indkey)) AS pk
       FROM pg_attribute a
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [relationOid],
  );
  return {
    notNull: new Set(result.rows.filter((r) => isTrue(r.attnotnull)).map((r) => r.attname)),
    primaryKey: result.rows.filter((r) => isTrue(r.pk)).map((r) => r.attname),
  };
}

/**
 * A boolean column as either client gives it: parsed (`true`) on a catalog connection,
 * or Postgres' text (`'t'`) on the snapshot connection, which parses no types because
 * every value goes through the column mappings (a bare truthiness test took 'f' for
 * true and made every column part of the key).
 */
function isTrue(v: unknown): boolean {
  return v === true || v === 't';
}

export function buildTableSchema(args: {
  topicPrefix: string;
  id: TableId;
  relationOid: number;
  replicaIdentity: ReplicaIdentity;
  columns: RelationColumn[];
  catalog: CatalogColumns;
  registry: TypeRegistry;
  modes: MappingModes;
  filter: TableFilter;
}): TableSchema {
  const { id, catalog } = args;
  const names = args.modes.names;
  const base = names
    ? names.topics.dataChangeTopic(id)
    : `${args.topicPrefix}.${id.schema}.${id.table}`;
  const schemaName = (name: string) => (names ? names.schemas.adjust(name) : name);
  const columns: CapturedColumn[] = [];
  // Every such column of the table named at once, so one config change fixes them all.
  const unmapped: UnmappedColumn[] = [];
  args.columns.forEach((c, position) => {
    if (!args.filter.includesColumn(id, c.name)) return;
    let mapping: ColumnMapping;
    try {
      mapping = requireMapping(args.registry, c.typeOid, c.typeMod, args.modes, {
        table: id,
        column: c.name,
      });
    } catch (error) {
      if (!(error instanceof UnknownDatatypeError)) throw error;
      unmapped.push(...error.columns);
      return;
    }
    const optional = !catalog.notNull.has(c.name);
    columns.push({
      name: c.name,
      field: fieldNameOf(names, c.name),
      position,
      mapping,
      optional,
      schema: { ...mapping.schema, optional },
    });
  });
  if (unmapped.length > 0) throw new UnknownDatatypeError(unmapped);
  refuseSharedFields(id, columns);
  let keyNames =
    args.modes.messageKeyColumns?.keyFor(
      id,
      columns.map((c) => c.name),
    ) ?? catalog.primaryKey;
  if (keyNames.length === 0 && args.replicaIdentity === 'index') {
    keyNames = args.columns.filter((c) => c.isKey).map((c) => c.name);
  }
  const keyColumns = keyNames
    .map((n) => columns.find((c) => c.name === n))
    .filter((c): c is CapturedColumn => c !== undefined);
  const mappers = args.modes.columnMappers;
  if (mappers && !mappers.isEmpty) {
    columns.forEach((c, i) => {
      const t = mappers.forColumn(
        id,
        c.name,
        mappedColumn(args.registry, args.columns[c.position], c),
      );
      if (t === null) return;
      const parameters = { ...c.schema.parameters, ...t.parameters };
      // A new object: the key keeps the column as it is.
      columns[i] = { ...c, schema: { ...c.schema, parameters }, transform: t.apply };
    });
  }
  const keySchema =
    keyColumns.length === 0
      ? null
      : Schemas.struct(
          keyColumns.map((c) => [c.field, c.schema]),
          { name: schemaName(`${base}.Key`) },
        );
  const valueSchema = Schemas.struct(
    columns.map((c) => [c.field, c.schema]),
    { name: schemaName(`${base}.Value`), optional: true },
  );
  return withReaders({
    id,
    relationOid: args.relationOid,
    topic: base,
    columns,
    keyColumns,
    keySchema,
    valueSchema,
    envelopeSchema: envelopeSchema(base, valueSchema, schemaName),
  });
}

/**
 * Two columns whose adjusted field names are the same would make one struct field of
 * two (Connect's SchemaBuilder refuses that too): the table cannot be captured so.
 */
function refuseSharedFields(id: TableId, columns: readonly CapturedColumn[]): void {
  const byField = new Map<string, string>();
  for (const c of columns) {
    const other = byField.get(c.field);
    if (other !== undefined)
      throw new ConnectException(
        `Table ${id.schema}.${id.table}: columns '${other}' and '${c.name}' both become field '${c.field}' ` +
          'under field.name.adjustment.mode: rename one, exclude one (column.exclude.list), or use avro_unicode, whose names do not collide',
      );
    byField.set(c.field, c.name);
  }
}

/**
 * The table as a snapshot row holds it: the snapshot selects the captured columns
 * only, so column i of the row is captured column i. Same schemas, same topic.
 */
export function capturedColumnsOnly(table: TableSchema): TableSchema {
  const columns = table.columns.map((c, i) => ({ ...c, position: i }));
  const at = new Map(table.columns.map((c, i) => [c.name, i]));
  return withReaders({
    ...table,
    columns,
    keyColumns: table.keyColumns.map((k) => ({ ...k, position: at.get(k.name) as number })),
  });
}

/** Postgres' CHAR and VARCHAR types as JDBC (pgjdbc) types them, the ones masks change. */
const CHAR_TYPES = new Set(['text', 'varchar', 'bpchar', 'char', 'name']);

/** A column as column-mappers.ts sees it: its root type (through domains) and length. */
function mappedColumn(
  registry: TypeRegistry,
  relation: RelationColumn,
  column: CapturedColumn,
): MappedColumn {
  let type = registry.get(relation.typeOid);
  let typmod = relation.typeMod;
  for (let depth = 0; type?.kind === 'd' && depth < 16; depth++) {
    typmod = type.baseTypmod;
    type = registry.get(type.baseOid);
  }
  const charType = type !== undefined && (CHAR_TYPES.has(type.name) || type.kind === 'e');
  const sized = type?.name === 'varchar' || type?.name === 'bpchar';
  return {
    charType,
    stringValues: column.schema.type === 'string',
    length: type?.name === 'char' ? 1 : sized && typmod >= 4 ? typmod - 4 : -1,
  };
}

function withReaders(table: Omit<TableSchema, 'readValue' | 'readKey'>): TableSchema {
  return {
    ...table,
    readValue: compileRowReader(table.columns.map(readerColumn)),
    readKey: table.keySchema === null ? null : compileRowReader(table.keyColumns.map(readerColumn)),
  };
}

function readerColumn(c: CapturedColumn): ReaderColumn {
  const missing = (v: unknown) =>
    v === UNCHANGED_TOAST
      ? (unavailable(c.schema) ?? fallback(c.schema))
      : c.optional
        ? null
        : fallback(c.schema);
  const t = c.transform;
  if (t === undefined)
    return { name: c.field, position: c.position, fromText: c.mapping.fromText, missing };
  // As Debezium's mapping converter: it sees every value, SQL NULL and placeholders too.
  const fromText = c.mapping.fromText;
  return {
    name: c.field,
    position: c.position,
    fromText: (text) => t(fromText(text)),
    missing: (v) => t(missing(v)),
  };
}

/** The value struct of a row; unchanged TOASTed columns carry UNAVAILABLE_VALUE. */
export function rowValue(
  table: TableSchema,
  tuple: readonly ColumnValue[],
): Record<string, unknown> {
  return table.readValue(tuple);
}

/** The key struct of a row, or null for a table without a key. */
export function rowKey(
  table: TableSchema,
  tuple: readonly ColumnValue[],
): Record<string, unknown> | null {
  return table.readKey === null ? null : table.readKey(tuple);
}

/**
 * The value a required column gets when Postgres did not send it: the old row of an
 * update or delete under REPLICA IDENTITY DEFAULT holds only the key columns, and a
 * NOT NULL field cannot be null (JsonConverter, like Kafka's, refuses such a struct).
 * Debezium does the same (JdbcValueConverters' fallback): the column's schema default
 * if it has one, else the zero of its type ("" for text, 0 for numbers, epoch for
 * temporal logical types).
 */
export function fallback(schema: Schema): unknown {
  if (schema.optional) return null;
  if (schema.defaultValue !== undefined && schema.defaultValue !== null) return schema.defaultValue;
  switch (schema.name) {
    case 'org.apache.kafka.connect.data.Decimal':
      return Buffer.from([0]);
    case 'org.apache.kafka.connect.data.Date':
    case 'org.apache.kafka.connect.data.Time':
    case 'org.apache.kafka.connect.data.Timestamp':
      return new Date(0);
  }
  switch (schema.type) {
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'map':
      return new Map();
    case 'struct': {
      const out: Record<string, unknown> = {};
      for (const f of schema.fields ?? []) out[f.name] = fallback(f.schema);
      return out;
    }
    default:
      return 0;
  }
}

/**
 * Debezium's placeholder in the column's own type: the text for strings, its UTF-8
 * bytes for binary columns, a one-element array for arrays of those.
 */
function unavailable(schema: Schema): unknown {
  // undefined: the type has no placeholder (the caller falls back to null or a zero).
  switch (schema.type) {
    case 'string':
      return UNAVAILABLE_VALUE;
    case 'bytes':
      return Buffer.from(UNAVAILABLE_VALUE);
    case 'array':
      return schema.valueSchema ? [unavailable(schema.valueSchema) ?? null] : null;
    default:
      return undefined;
  }
}
