/**
 * The mappings beyond numbers, text and time: money, bit strings, bytea per
 * binary.handling.mode, network addresses and ranges, text search vectors, the
 * geometric types, and the extension types Debezium knows by name (hstore, ltree,
 * citext, pgvector's vector / halfvec / sparsevec, PostGIS' geometry / geography),
 * as PostgresValueConverter maps them:
 *   money          decimal.handling.mode precise: Decimal, scale money.fraction.digits
 *                  (no precision parameter), the value rounded half up to that scale;
 *                  double: FLOAT64; string: STRING, the plain decimal (money-text.ts).
 *                  Text in a locale money-text.ts does not read fails the task, naming
 *                  table, column, value and lc_monetary.
 *   bit(1), varbit(1)  BOOLEAN
 *   bit(n), varbit(n), varbit  io.debezium.data.Bits BYTES, parameter length = n (varbit
 *                  without one: 2147483647), bytes as binary-values.ts's bitsBytes.
 *   bytea          binary.handling.mode (binary-values.ts)
 *   inet cidr macaddr macaddr8 int4range int8range numrange tsrange tstzrange daterange
 *                  STRING, Postgres' text (ranges of timestamptz in UTC: the session's
 *                  TimeZone, SESSION_OPTIONS)
 *   tsvector       io.debezium.data.Tsvector STRING
 *   point box lseg path polygon circle line  geometric-values.ts
 *   hstore         hstore.handling.mode (hstore-text.ts)
 *   ltree          io.debezium.data.Ltree STRING
 *   citext         STRING
 *   vector halfvec sparsevec  vector-text.ts
 *   geometry geography (PostGIS)  geometric-values.ts
 * Extension types are recognised by name, in any schema, when they are base types (as
 * Debezium's TypeRegistry looks them up by name).
 */
import { Schemas } from '../../../src/connect/api/index.ts';
import { binaryEncoding, bitsBytes } from './binary-values.ts';
import {
  boxValue,
  circleValue,
  GeometricSchemas,
  lineValue,
  lsegValue,
  pathValue,
  pointValue,
  polygonValue,
  postgisValue,
} from './geometric-values.ts';
import { hstoreJson, hstoreMap } from './hstore-text.ts';
import {
  type ColumnMapping,
  type ColumnRef,
  DebeziumNames,
  guarded,
  identity,
  type MappingModes,
  named,
  UnrepresentableValueError,
} from './mapping-types.ts';
import { moneyDecimalText, unscaledHalfUp } from './money-text.ts';
import { bigIntBytes, parseByteaHex } from './text-values.ts';
import { doubleVector, floatVector, sparseVector, VectorSchemas } from './vector-text.ts';

/** varbit without a length: Debezium's length parameter (Integer.MAX_VALUE). */
const UNBOUNDED_BITS = 2_147_483_647;

const STRING_TYPES = new Set([
  'inet',
  'cidr',
  'macaddr',
  'macaddr8',
  'int4range',
  'int8range',
  'numrange',
  'tsrange',
  'tstzrange',
  'daterange',
]);

export function moneyMapping(modes: MappingModes, where: ColumnRef): ColumnMapping {
  const digits = modes.moneyFractionDigits ?? 2;
  const read = (s: string): string => {
    const plain = moneyDecimalText(s);
    if (plain !== null) return plain;
    throw new UnrepresentableValueError(
      where,
      s,
      "is money in a form the connector does not read for sure: it reads lc_monetary's output " +
        "with '.' before the fraction and ',' between thousands (C, en_US and the like), and a " +
        'currency sign before or after. Set lc_monetary for the database to such a locale with ' +
        'the same number of fraction digits (ALTER DATABASE ... SET lc_monetary = ...; money ' +
        'counts units of the locale), or leave the column out with column.exclude.list',
    );
  };
  switch (modes.decimalHandlingMode) {
    case 'double':
      return { schema: Schemas.float64(), fromText: (s) => +read(s) };
    case 'string':
      return { schema: Schemas.string(), fromText: read };
    case 'precise':
      return {
        schema: Schemas.decimal(digits),
        fromText: (s) => bigIntBytes(unscaledHalfUp(read(s), digits)),
      };
  }
}

function bitsMapping(name: string, typmod: number, where: ColumnRef): ColumnMapping {
  const length = typmod >= 0 ? typmod : name === 'bit' ? 1 : UNBOUNDED_BITS;
  if (length === 1) {
    return {
      schema: Schemas.boolean(),
      fromText: (s) => {
        // varbit(1) can hold B'', which has no boolean (Debezium's Integer.valueOf throws).
        if (s === '')
          throw new UnrepresentableValueError(
            where,
            s,
            'is an empty bit string, which a bit(1) / varbit(1) column sent as BOOLEAN cannot carry. ' +
              'Leave the column out with column.exclude.list, or change it to varbit(2) or more (sent as io.debezium.data.Bits)',
          );
        return s === '1';
      },
    };
  }
  return {
    schema: {
      ...named(Schemas.bytes(), DebeziumNames.Bits, 1),
      parameters: { length: String(length) },
    },
    fromText: bitsBytes,
  };
}

/** The mapping of a pg_catalog type this module covers, or null. */
export function catalogExtraMapping(
  name: string,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  if (STRING_TYPES.has(name)) return { schema: Schemas.string(), fromText: identity };
  switch (name) {
    case 'money':
      return moneyMapping(modes, where);
    case 'bit':
    case 'varbit':
      return bitsMapping(name, typmod, where);
    case 'bytea': {
      const mode = modes.binaryHandlingMode ?? 'bytes';
      // The default skips a call per value.
      if (mode === 'bytes') return { schema: Schemas.bytes(), fromText: parseByteaHex };
      const encoding = binaryEncoding(mode);
      return { schema: encoding.schema, fromText: (s) => encoding.encode(parseByteaHex(s)) };
    }
    case 'tsvector':
      return { schema: named(Schemas.string(), DebeziumNames.Tsvector, 1), fromText: identity };
    case 'point':
      return { schema: GeometricSchemas.Point, fromText: guarded(where, 'a point', pointValue) };
    case 'box':
      return { schema: GeometricSchemas.Geometry, fromText: guarded(where, 'a box', boxValue) };
    case 'lseg':
      return { schema: GeometricSchemas.Geometry, fromText: guarded(where, 'an lseg', lsegValue) };
    case 'path':
      return { schema: GeometricSchemas.Geometry, fromText: guarded(where, 'a path', pathValue) };
    case 'polygon':
      return {
        schema: GeometricSchemas.Geometry,
        fromText: guarded(where, 'a polygon', polygonValue),
      };
    case 'circle':
      return { schema: GeometricSchemas.Circle, fromText: guarded(where, 'a circle', circleValue) };
    case 'line':
      return { schema: GeometricSchemas.Line, fromText: guarded(where, 'a line', lineValue) };
  }
  return null;
}

/** The mapping of an extension's base type Debezium knows by name, or null. */
export function extensionTypeMapping(
  name: string,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  switch (name) {
    case 'citext':
      return { schema: Schemas.string(), fromText: identity };
    case 'ltree':
      return { schema: named(Schemas.string(), DebeziumNames.Ltree, 1), fromText: identity };
    case 'hstore':
      return modes.hstoreHandlingMode === 'map'
        ? {
            schema: Schemas.map(Schemas.string(), Schemas.string({ optional: true })),
            fromText: guarded(where, 'an hstore', hstoreMap),
          }
        : {
            schema: named(Schemas.string(), DebeziumNames.Json, 1),
            fromText: guarded(where, 'an hstore', hstoreJson),
          };
    case 'vector':
      return {
        schema: VectorSchemas.DoubleVector,
        fromText: guarded(where, 'a pgvector vector', doubleVector),
      };
    case 'halfvec':
      return {
        schema: VectorSchemas.FloatVector,
        fromText: guarded(where, 'a pgvector halfvec', floatVector),
      };
    case 'sparsevec':
      return {
        schema: VectorSchemas.SparseDoubleVector,
        fromText: guarded(where, 'a pgvector sparsevec', sparseVector),
      };
    case 'geometry':
      return {
        schema: GeometricSchemas.Geometry,
        fromText: guarded(where, 'a PostGIS geometry (hex EWKB)', (s) => ({
          ...postgisValue(s),
          extensions: null,
        })),
      };
    case 'geography':
      return {
        schema: GeometricSchemas.Geography,
        fromText: guarded(where, 'a PostGIS geography (hex EWKB)', postgisValue),
      };
  }
  return null;
}
