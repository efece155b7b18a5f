/**
 * Postgres column types to Connect schemas and values, as Debezium's Postgres
 * connector maps them (its "How the connector maps data types" reference):
 *   int2 INT16, int4 INT32, int8/oid INT64, float4 FLOAT32, float8 FLOAT64, bool BOOLEAN
 *   text/varchar/bpchar/name/citext STRING, bytea BYTES
 *   numeric(p,s)   decimal.handling.mode precise: Decimal (scale, connect.decimal.precision)
 *                  numeric without scale: io.debezium.data.VariableScaleDecimal {scale, value}
 *                  double: FLOAT64, string: STRING in Java's BigDecimal.toString() form
 *                  ("1E-7", numeric(10,7) zero "0E-7"; bigDecimalToString says when)
 *                  'NaN', 'Infinity', '-Infinity': double NaN / ±Infinity, string "NAN" /
 *                  "POSITIVE_INFINITY" / "NEGATIVE_INFINITY", precise: the task fails
 *                  (UnrepresentableValueError; numericMapping says why)
 *   float4/float8  'NaN', 'Infinity', '-Infinity' as the float values (JsonConverter
 *                  writes them as the strings "NaN", "Infinity", "-Infinity")
 *   date           io.debezium.time.Date INT32 days (connect: kafka Date)
 *   time(p)        adaptive: p<=3 io.debezium.time.Time INT32 ms, else MicroTime INT64 µs;
 *                  adaptive_time_microseconds: MicroTime; connect: kafka Time (ms)
 *   timestamp(p)   adaptive: p<=3 io.debezium.time.Timestamp ms, else MicroTimestamp µs;
 *                  connect: kafka Timestamp (ms)
 *   timestamptz    io.debezium.time.ZonedTimestamp STRING (UTC, ISO-8601)
 *   timetz         io.debezium.time.ZonedTime STRING (UTC)
 *   interval       io.debezium.time.MicroDuration INT64 (month = 365.25/12 days)
 *   'infinity' and '-infinity' of date, timestamp, timestamptz and interval: Debezium's
 *                  sentinels (temporal-text.ts lists them); INT64 values beyond 2^53
 *                  (timestamps before 1685 or after 2254 in µs, int8) are bigints.
 *   uuid           io.debezium.data.Uuid, json/jsonb io.debezium.data.Json, xml io.debezium.data.Xml
 *   enum           io.debezium.data.Enum STRING, parameter `allowed` = labels joined by ','
 *   domain         its base type; arrays: ARRAY of the element mapping (optional elements)
 * Any other type has no mapping (mapColumn returns null); unknown-datatypes.ts decides
 * what becomes of such a column (include.unknown.datatypes): it is never left out.
 */
import { ConnectException, type Schema, Schemas } from '../../../src/connect/api/index.ts';
import { int64FromText } from './int64.ts';
import type { TableId } from './table-filter.ts';
import {
  formatZonedTime,
  formatZonedTimestampText,
  parseDateDays,
  parseIntervalMicros,
  parseTimeMicros,
  parseTimestampMicros,
  parseTimestampMillis,
} from './temporal-text.ts';
import {
  bigDecimalToString,
  decimalBytes,
  isNumericSpecial,
  parseArrayLiteral,
  parseByteaHex,
  scaleOf,
} from './text-values.ts';
import type { TypeRegistry } from './type-registry.ts';

export type DecimalHandlingMode = 'precise' | 'double' | 'string';
export type TimePrecisionMode = 'adaptive' | 'adaptive_time_microseconds' | 'connect';

export interface MappingModes {
  decimalHandlingMode: DecimalHandlingMode;
  timePrecisionMode: TimePrecisionMode;
  /** include.unknown.datatypes (unknown-datatypes.ts); false when absent. */
  includeUnknownDatatypes?: boolean;
}

/** The column a mapping converts, for error messages. */
export interface ColumnRef {
  table: TableId;
  column: string;
}

/**
 * A column value the configured mapping has no representation for. Fatal (kind
 * `connect`): the task fails with the message, and nothing past the value is confirmed
 * to Postgres, so a restart with the config the message names picks it up. Retrying
 * would read the same WAL and fail the same way.
 */
export class UnrepresentableValueError extends ConnectException {
  constructor(
    readonly where: ColumnRef,
    readonly value: string,
    explanation: string,
  ) {
    super(
      `Table ${where.table.schema}.${where.table.table}, column ${where.column}: value '${value}' ${explanation}`,
    );
    this.name = 'UnrepresentableValueError';
  }
}

/** A column's schema (required; the caller makes it optional) and its text converter. */
export interface ColumnMapping {
  schema: Schema;
  fromText(text: string): unknown;
}

export const DebeziumNames = {
  Date: 'io.debezium.time.Date',
  Time: 'io.debezium.time.Time',
  MicroTime: 'io.debezium.time.MicroTime',
  Timestamp: 'io.debezium.time.Timestamp',
  MicroTimestamp: 'io.debezium.time.MicroTimestamp',
  ZonedTimestamp: 'io.debezium.time.ZonedTimestamp',
  ZonedTime: 'io.debezium.time.ZonedTime',
  MicroDuration: 'io.debezium.time.MicroDuration',
  VariableScaleDecimal: 'io.debezium.data.VariableScaleDecimal',
  Uuid: 'io.debezium.data.Uuid',
  Json: 'io.debezium.data.Json',
  Xml: 'io.debezium.data.Xml',
  Enum: 'io.debezium.data.Enum',
} as const;

const identity = (s: string) => s;
const toInt = (s: string) => +s;
const named = (schema: Schema, name: string, version?: number): Schema =>
  version === undefined ? { ...schema, name } : { ...schema, name, version };

/** Time typmod is the fractional-second precision; -1 means the default, 6. */
function precisionOf(typmod: number): number {
  return typmod < 0 ? 6 : typmod;
}

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
  const connect = modes.timePrecisionMode === 'connect';
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
    case 'citext':
      return { schema: Schemas.string(), fromText: identity };
    case 'bytea':
      return { schema: Schemas.bytes(), fromText: parseByteaHex };
    case 'numeric':
      return numericMapping(typmod, modes.decimalHandlingMode, where);
    case 'uuid':
      return { schema: named(Schemas.string(), DebeziumNames.Uuid, 1), fromText: identity };
    case 'json':
    case 'jsonb':
      return { schema: named(Schemas.string(), DebeziumNames.Json, 1), fromText: identity };
    case 'xml':
      return { schema: named(Schemas.string(), DebeziumNames.Xml, 1), fromText: identity };
    case 'date':
      return {
        schema: connect ? Schemas.date() : named(Schemas.int32(), DebeziumNames.Date, 1),
        fromText: parseDateDays,
      };
    case 'time': {
      const micros =
        modes.timePrecisionMode === 'adaptive_time_microseconds' || precisionOf(typmod) > 3;
      if (connect)
        return { schema: Schemas.time(), fromText: (s) => Math.floor(parseTimeMicros(s) / 1000) };
      if (micros)
        return {
          schema: named(Schemas.int64(), DebeziumNames.MicroTime, 1),
          fromText: parseTimeMicros,
        };
      return {
        schema: named(Schemas.int32(), DebeziumNames.Time, 1),
        fromText: (s) => Math.floor(parseTimeMicros(s) / 1000),
      };
    }
    case 'timestamp': {
      if (connect) return { schema: Schemas.timestamp(), fromText: parseTimestampMillis };
      if (precisionOf(typmod) > 3)
        return {
          schema: named(Schemas.int64(), DebeziumNames.MicroTimestamp, 1),
          fromText: parseTimestampMicros,
        };
      return {
        schema: named(Schemas.int64(), DebeziumNames.Timestamp, 1),
        fromText: parseTimestampMillis,
      };
    }
    case 'timestamptz':
      return {
        schema: named(Schemas.string(), DebeziumNames.ZonedTimestamp, 1),
        fromText: formatZonedTimestampText,
      };
    case 'timetz':
      return {
        schema: named(Schemas.string(), DebeziumNames.ZonedTime, 1),
        fromText: formatZonedTime,
      };
    case 'interval':
      return {
        schema: named(Schemas.int64(), DebeziumNames.MicroDuration, 1),
        fromText: parseIntervalMicros,
      };
    default:
      return null;
  }
}

/**
 * The mapping of column `where`, of type `oid` with modifier `typmod`, or null when
 * the type has none (see unknown-datatypes.ts).
 */
export function mapColumn(
  registry: TypeRegistry,
  oid: number,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  const type = registry.get(oid);
  if (!type) return null;
  if (type.kind === 'd') return mapColumn(registry, type.baseOid, type.baseTypmod, modes, where);
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
    const element = mapColumn(registry, type.elementOid, typmod, modes, where);
    if (!element) return null;
    const convert = (values: unknown[]): unknown[] =>
      values.map((v) =>
        v === null ? null : Array.isArray(v) ? convert(v) : element.fromText(v as string),
      );
    return {
      schema: Schemas.array({ ...element.schema, optional: true }),
      fromText: (s) => convert(parseArrayLiteral(s)),
    };
  }
  if (type.schema !== 'pg_catalog' && type.name !== 'citext') return null;
  return baseMapping(type.name, typmod, modes, where);
}
