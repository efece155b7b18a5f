/**
 * Postgres column types to Connect schemas and values, as Debezium's Postgres
 * connector maps them (its "How the connector maps data types" reference and
 * PostgresValueConverter):
 *   int2 INT16, int4 INT32, int8/oid INT64, float4 FLOAT32, float8 FLOAT64, bool BOOLEAN
 *   text/varchar/bpchar/name/citext STRING
 *   numeric(p,s)   decimal.handling.mode precise: Decimal (scale, connect.decimal.precision)
 *                  numeric without scale: io.debezium.data.VariableScaleDecimal {scale, value}
 *                  double: FLOAT64, string: STRING in Java's BigDecimal.toString() form
 *                  ("1E-7", numeric(10,7) zero "0E-7"; bigDecimalToString says when)
 *                  'NaN', 'Infinity', '-Infinity': double NaN / ±Infinity, string "NAN" /
 *                  "POSITIVE_INFINITY" / "NEGATIVE_INFINITY", precise: the task fails
 *                  (UnrepresentableValueError; numericMapping says why)
 *   float4/float8  'NaN', 'Infinity', '-Infinity' as the float values (JsonConverter
 *                  writes them as the strings "NaN", "Infinity", "-Infinity")
 *   date, time, timestamp, timestamptz, timetz, interval: per time.precision.mode and
 *                  interval.handling.mode, temporal-mapping.ts (values: temporal-text.ts)
 *   uuid           io.debezium.data.Uuid, json/jsonb io.debezium.data.Json, xml io.debezium.data.Xml
 *   enum           io.debezium.data.Enum STRING, parameter `allowed` = labels joined by ','
 *   money, bit/varbit, bytea (binary.handling.mode), inet/cidr/macaddr/macaddr8, ranges,
 *   tsvector, geometric types, hstore, ltree, pgvector, PostGIS: extension-mapping.ts
 *   domain         its base type (with the domain's typmod); arrays: ARRAY of the element
 *                  mapping (optional elements), for every mapped element type. Debezium
 *                  itself has no mapping for arrays of money, interval, varbit, xml, point
 *                  and of domains; we send them as arrays of the element's mapping.
 *   column.propagate.source.type / datatype.propagate.source.type: source-type-parameters.ts
 * Any other type has no mapping (mapColumn returns null): multiranges, tsquery, pg_lsn,
 * txid_snapshot, composite types, other extensions' types. unknown-datatypes.ts decides
 * what becomes of such a column (include.unknown.datatypes): it is never left out.
 */
import { type Schema, Schemas } from '../../../src/connect/api/index.ts';
import { catalogExtraMapping, extensionTypeMapping } from './extension-mapping.ts';
import { int64FromText } from './int64.ts';
import {
  type ColumnMapping,
  type ColumnRef,
  DebeziumNames,
  type DecimalHandlingMode,
  identity,
  type MappingModes,
  named,
  UnrepresentableValueError,
} from './mapping-types.ts';
import { sourceTypeParameters } from './source-type-parameters.ts';
import { temporalMapping } from './temporal-mapping.ts';
import {
  bigDecimalToString,
  decimalBytes,
  isNumericSpecial,
  parseArrayLiteral,
  scaleOf,
} from './text-values.ts';
import type { TypeRegistry } from './type-registry.ts';

export {
  type BinaryHandlingMode,
  type ColumnMapping,
  type ColumnRef,
  DebeziumNames,
  type DecimalHandlingMode,
  type HstoreHandlingMode,
  type IntervalHandlingMode,
  type MappingModes,
  type PropagateSourceType,
  type TimePrecisionMode,
  UnrepresentableValueError,
} from './mapping-types.ts';

const toInt = (s: string) => +s;

export const VARIABLE_SCALE_DECIMAL_SCHEMA: Schema = Schemas.struct(
  [
    ['scale', Schemas.int32()],
    ['value', Schemas.bytes()],
  ],
  { name: DebeziumNames.VariableScaleDecimal, version: 1, doc: 'Variable scaled decimal' },
);

/**
 * numeric's special values in decimal.handling.mode=string: the names Debezium sends
 * (SpecialValueDecimal.toString() is its enum constant's name), not Postgres' text.
 */
function debeziumSpecialName(text: string): string {
  return text === 'NaN' ? 'NAN' : text === 'Infinity' ? 'POSITIVE_INFINITY' : 'NEGATIVE_INFINITY';
}

/**
 * Special values (NaN; ±Infinity on Postgres 14+) in each decimal.handling.mode, as
 * Debezium's PostgresValueConverter.convertDecimal and SpecialValueDecimal.fromLogical
 * handle them (pgoutput and snapshot alike):
 *   double   Double.NaN / ±Infinity. `+text` parses Postgres' spelling to the same doubles.
 *   string   "NAN", "POSITIVE_INFINITY", "NEGATIVE_INFINITY"; finite values as
 *            BigDecimal.toString() writes them (bigDecimalToString), numeric(p,s) and
 *            unconstrained alike, in arrays too (each element goes through the same
 *            converter in PostgresValueConverter.createArrayConverter).
 *   precise  Debezium throws (ConnectException "Got a special value (NaN/Infinity) for
 *            Decimal type in column ... set decimal handling mode to 'string'"), for
 *            Decimal and VariableScaleDecimal columns alike. We fail too, on purpose:
 *            neither schema can hold the value, and every stand-in corrupts data
 *            silently: null reads as SQL NULL (and breaks a NOT NULL column's schema),
 *            zero as a real zero (Debezium's maintainers turned zero down for that
 *            reason, DBZ-351). The message names table, column, value and both modes
 *            that can carry it, so the fix is a config change and a restart.
 */
export function numericMapping(
  typmod: number,
  mode: DecimalHandlingMode,
  where: ColumnRef,
): ColumnMapping {
  if (mode === 'double') return { schema: Schemas.float64(), fromText: toInt };
  if (mode === 'string') {
    return {
      schema: Schemas.string(),
      fromText: (s) => (isNumericSpecial(s) ? debeziumSpecialName(s) : bigDecimalToString(s)),
    };
  }
  const unrepresentable = (s: string) =>
    new UnrepresentableValueError(
      where,
      s,
      'cannot be represented with decimal.handling.mode=precise: a Kafka Connect Decimal has ' +
        'no NaN or infinity. Set decimal.handling.mode=string (sends "NAN", "POSITIVE_INFINITY", ' +
        '"NEGATIVE_INFINITY", as Debezium does) or decimal.handling.mode=double (sends NaN and ' +
        '±Infinity as doubles); either changes the column to a string or float64 field.',
    );
  if (typmod < 0) {
    return {
      schema: VARIABLE_SCALE_DECIMAL_SCHEMA,
      fromText: (s) => {
        if (isNumericSpecial(s)) throw unrepresentable(s);
        const scale = scaleOf(s);
        return { scale, value: decimalBytes(s, scale) };
      },
    };
  }
  const precision = ((typmod - 4) >> 16) & 0xffff;
  const scale = (typmod - 4) & 0xffff;
  return {
    schema: Schemas.decimal(scale, {
      parameters: { 'connect.decimal.precision': String(precision) },
    }),
    fromText: (s) => {
      if (isNumericSpecial(s)) throw unrepresentable(s);
      return decimalBytes(s, scale);
    },
  };
}

function baseMapping(
  name: string,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  switch (name) {
    case 'int2':
      return { schema: Schemas.int16(), fromText: toInt };
    case 'int4':
      return { schema: Schemas.int32(), fromText: toInt };
    case 'int8':
    case 'oid':
      return { schema: Schemas.int64(), fromText: int64FromText };
    case 'float4':
      return { schema: Schemas.float32(), fromText: toInt };
    case 'float8':
      return { schema: Schemas.float64(), fromText: toInt };
    case 'bool':
      return { schema: Schemas.boolean(), fromText: (s) => s === 't' };
    case 'text':
    case 'varchar':
    case 'bpchar':
    case 'char':
    case 'name':
      return { schema: Schemas.string(), fromText: identity };
    case 'numeric':
      return numericMapping(typmod, modes.decimalHandlingMode, where);
    case 'uuid':
      return { schema: named(Schemas.string(), DebeziumNames.Uuid, 1), fromText: identity };
    case 'json':
    case 'jsonb':
      return { schema: named(Schemas.string(), DebeziumNames.Json, 1), fromText: identity };
    case 'xml':
      return { schema: named(Schemas.string(), DebeziumNames.Xml, 1), fromText: identity };
    default:
      return (
        temporalMapping(name, typmod, modes, where) ??
        catalogExtraMapping(name, typmod, modes, where)
      );
  }
}

/**
 * The mapping of column `where`, of type `oid` with modifier `typmod`, or null when
 * the type has none (see unknown-datatypes.ts). Its schema carries the
 * __debezium.source.column.* parameters when modes.propagateSourceType selects the column.
 */
export function mapColumn(
  registry: TypeRegistry,
  oid: number,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  const mapping = mapType(registry, oid, typmod, modes, where);
  const propagate = modes.propagateSourceType;
  const type = registry.get(oid);
  if (!mapping || !propagate || !type) return mapping;
  const prefix = `${where.table.schema}.${where.table.table}.`;
  const column = `${prefix}${where.column}`;
  const datatype = `${prefix}${type.name}`;
  if (
    !propagate.columns.some((r) => r.test(column)) &&
    !propagate.datatypes.some((r) => r.test(datatype))
  )
    return mapping;
  const parameters = {
    ...mapping.schema.parameters,
    ...sourceTypeParameters(registry, type, typmod, where.column),
  };
  return { ...mapping, schema: { ...mapping.schema, parameters } };
}

function mapType(
  registry: TypeRegistry,
  oid: number,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  const type = registry.get(oid);
  if (!type) return null;
  if (type.kind === 'd') return mapType(registry, type.baseOid, type.baseTypmod, modes, where);
  if (type.kind === 'e') {
    return {
      fromText: identity,
      schema: {
        ...named(Schemas.string(), DebeziumNames.Enum, 1),
        parameters: { allowed: (type.enumLabels ?? []).join(',') },
      },
    };
  }
  if (type.isArray && type.elementOid !== 0) {
    const element = mapType(registry, type.elementOid, typmod, modes, where);
    if (!element) return null;
    const delimiter = registry.get(type.elementOid)?.delimiter ?? ',';
    const convert = (values: unknown[]): unknown[] =>
      values.map((v) =>
        v === null ? null : Array.isArray(v) ? convert(v) : element.fromText(v as string),
      );
    return {
      schema: Schemas.array({ ...element.schema, optional: true }),
      fromText: (s) => convert(parseArrayLiteral(s, delimiter)),
    };
  }
  if (type.schema !== 'pg_catalog')
    return type.kind === 'b' ? extensionTypeMapping(type.name, modes, where) : null;
  return baseMapping(type.name, typmod, modes, where);
}
