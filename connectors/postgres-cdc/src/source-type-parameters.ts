/**
 * column.propagate.source.type / datatype.propagate.source.type: the schema parameters
 * Debezium's PropagateSourceMetadataToSchemaParameter adds to a matching column's schema:
 *   __debezium.source.column.type    the column's type name upper-cased: pg_type.typname,
 *                                    so a domain's own name ('FLOAT83'), an array's '_INT4'
 *   __debezium.source.column.length  as pgjdbc reports COLUMN_SIZE (TypeInfoCache
 *                                    getPrecision, or getDisplaySize where that is 0):
 *                                    varchar(n) n, numeric(p,s) p, numeric 131089, bit(n) n,
 *                                    int4 10, timestamp(p) 22 + p + 1, text, money and
 *                                    other types without a size 2147483647, ...
 *   __debezium.source.column.scale   as pgjdbc reports DECIMAL_DIGITS (getScale):
 *                                    numeric(p,s) s, time/timestamp precision (6 by
 *                                    default), float4 8, float8 17, else 0
 *   __debezium.source.column.name    the column's name
 * A domain is sized by its base type and modifier, an array of a built-in type by its
 * element, as pgjdbc does. Matching, as Debezium's ColumnMappers: each regular
 * expression matches the whole of 'schema.table.column' (column.propagate.source.type)
 * or 'schema.table.typname' (datatype.propagate.source.type), case-insensitively.
 * Debezium also adds __debezium.source.column.comment for columns with a comment; we do
 * not read comments, so it is never added.
 */
import type { PgType, TypeRegistry } from './type-registry.ts';

/** pgjdbc's unknownLength: Integer.MAX_VALUE. */
const UNKNOWN_LENGTH = 2_147_483_647;

function precisionOf(name: string, typmod: number): number {
  switch (name) {
    case 'int2':
      return 5;
    case 'oid':
    case 'int4':
      return 10;
    case 'int8':
      return 19;
    case 'float4':
      return 8;
    case 'float8':
      return 17;
    case 'numeric':
      return typmod === -1 ? 0 : ((typmod - 4) >> 16) & 0xffff;
    case 'char':
    case 'bool':
      return 1;
    case 'bpchar':
    case 'varchar':
      return typmod === -1 ? UNKNOWN_LENGTH : typmod - 4;
    case 'date':
    case 'time':
    case 'timetz':
    case 'interval':
    case 'timestamp':
    case 'timestamptz':
      return displaySizeOf(name, typmod);
    case 'bit':
      return typmod;
    case 'varbit':
      return typmod === -1 ? UNKNOWN_LENGTH : typmod;
    default:
      return UNKNOWN_LENGTH;
  }
}

function displaySizeOf(name: string, typmod: number): number {
  // Fractional digits and their point (pgjdbc: time(1) shows two digits).
  const seconds = typmod === -1 ? 7 : typmod === 0 ? 0 : typmod === 1 ? 3 : typmod + 1;
  switch (name) {
    case 'date':
      return 13;
    case 'time':
      return 8 + seconds;
    case 'timetz':
      return 14 + seconds;
    case 'timestamp':
      return 22 + seconds;
    case 'timestamptz':
      return 28 + seconds;
    case 'interval':
      return 49;
    case 'numeric': {
      if (typmod === -1) return 131_089;
      const precision = ((typmod - 4) >> 16) & 0xffff;
      return 1 + precision + ((typmod - 4) & 0xffff ? 1 : 0);
    }
    default:
      return UNKNOWN_LENGTH;
  }
}

function scaleOf(name: string, typmod: number): number {
  switch (name) {
    case 'float4':
      return 8;
    case 'float8':
      return 17;
    case 'numeric':
      return typmod === -1 ? 0 : (typmod - 4) & 0xffff;
    case 'time':
    case 'timetz':
    case 'timestamp':
    case 'timestamptz':
      return typmod === -1 ? 6 : typmod;
    case 'interval':
      return typmod === -1 ? 6 : typmod & 0xffff;
    default:
      return 0;
  }
}

/** The pg_catalog type (and modifier) pgjdbc sizes a column of `type` by. */
function sizedBy(registry: TypeRegistry, type: PgType, typmod: number): [string, number] {
  let t: PgType | undefined = type;
  let mod = typmod;
  while (t?.kind === 'd') {
    if (mod === -1) mod = t.baseTypmod;
    t = registry.get(t.baseOid);
  }
  if (t?.isArray && t.elementOid !== 0) {
    const element = registry.get(t.elementOid);
    if (element?.schema === 'pg_catalog') t = element;
  }
  return t?.schema === 'pg_catalog' ? [t.name, mod] : ['', mod];
}

export function sourceTypeParameters(
  registry: TypeRegistry,
  type: PgType,
  typmod: number,
  column: string,
): Record<string, string> {
  const [name, mod] = sizedBy(registry, type, typmod);
  const precision = precisionOf(name, mod);
  return {
    '__debezium.source.column.type': type.name.toUpperCase(),
    '__debezium.source.column.length': String(
      precision === 0 ? displaySizeOf(name, mod) : precision,
    ),
    '__debezium.source.column.scale': String(scaleOf(name, mod)),
    '__debezium.source.column.name': column,
  };
}

/** A Debezium regex list entry as a whole-string, case-insensitive RegExp. */
export function wholeMatch(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'i');
}
