/**
 * Debezium's semantic types that travel as strings or structs, turned into the values
 * of native Parquet logical types (`parquet.debezium.logical.types=native`), so DuckDB,
 * Spark and Athena read real types without casts:
 *
 *   io.debezium.time.ZonedTimestamp  "2024-05-01T10:15:30.123456Z"  TIMESTAMP(MICROS, UTC)
 *                                    Java's ISO_OFFSET_DATE_TIME: any offset, years past
 *                                    9999 signed ("+10000-..."); 'infinity' / '-infinity'
 *                                    (Debezium's Postgres sentinels) as DuckDB's infinite
 *                                    timestamps, ±(2^63 - 1) µs
 *   io.debezium.time.ZonedTime       "10:15:30.123456Z"           TIME(MICROS, UTC)
 *   io.debezium.data.Uuid            "a0eebc99-9c0b-..."           UUID (16 bytes)
 *   io.debezium.data.Json            the document                  JSON
 *   io.debezium.data.VariableScaleDecimal {scale, value}           DECIMAL(38, s) or DOUBLE
 *                                    (parquet.variable.scale.decimal.*)
 *
 * A value these cannot represent exactly (sub-microsecond digits, a decimal with more
 * fractional digits than the column's scale) throws a RowError naming the column and
 * the key that keeps the value as it is: never rounded away silently. `as-is` keeps
 * Confluent's behaviour (the physical string or struct).
 */
import { unscaledFromBytes } from '../../src/connect/api/index.ts';
import { RowError } from './row-error.ts';

export const DebeziumType = {
  ZonedTimestamp: 'io.debezium.time.ZonedTimestamp',
  ZonedTime: 'io.debezium.time.ZonedTime',
  Uuid: 'io.debezium.data.Uuid',
  Json: 'io.debezium.data.Json',
  VariableScaleDecimal: 'io.debezium.data.VariableScaleDecimal',
} as const;

export type DebeziumTypesMode = 'native' | 'as-is';

/** How VariableScaleDecimal columns are written in native mode. */
export type VariableScaleDecimalMapping = { mode: 'decimal'; scale: number } | { mode: 'double' };

/** How Debezium's semantic types map (MappingOptions in schema-mapping.ts). */
export interface SemanticTypes {
  debeziumTypes: DebeziumTypesMode;
  variableScaleDecimal: VariableScaleDecimalMapping;
}

export const DEFAULT_SEMANTIC_TYPES: SemanticTypes = {
  debeziumTypes: 'native',
  variableScaleDecimal: { mode: 'decimal', scale: 10 },
};

/** DuckDB's infinite timestamps: the largest and smallest INT64 but one. */
export const TIMESTAMP_INFINITY_MICROS = 2n ** 63n - 1n;
export const TIMESTAMP_MINUS_INFINITY_MICROS = -(2n ** 63n - 1n);

const AS_IS = 'set parquet.debezium.logical.types=as-is to write the text as it is';

const ZONED_TIMESTAMP =
  /^([+-]?\d{4,9})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)$/;
const ZONED_TIME =
  /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)$/;

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function offsetSeconds(zone: string): number {
  if (zone === 'Z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replaceAll(':', '');
  const h = Number(digits.slice(0, 2));
  const m = Number(digits.slice(2, 4) || '0');
  const s = Number(digits.slice(4, 6) || '0');
  return sign * (h * 3600 + m * 60 + s);
}

/** Microseconds of a fraction's digits; throws when digits below a microsecond are set. */
function fractionMicros(fraction: string | undefined, column: string, value: string): number {
  if (fraction === undefined) return 0;
  if (fraction.length > 6 && !/^0*$/.test(fraction.slice(6))) {
    throw new RowError(
      `column '${column}': ${value} has digits below a microsecond, which a Parquet TIMESTAMP(MICROS) cannot hold; ${AS_IS}`,
    );
  }
  return Number(fraction.slice(0, 6).padEnd(6, '0'));
}

/** Epoch microseconds of a ZonedTimestamp string (a bigint beyond 2^53). */
export function zonedTimestampMicros(value: unknown, column: string): number | bigint {
  if (typeof value === 'number' || typeof value === 'bigint') return value;
  if (typeof value !== 'string') throw notText(column, 'ZonedTimestamp', value);
  if (value === 'infinity') return TIMESTAMP_INFINITY_MICROS;
  if (value === '-infinity') return TIMESTAMP_MINUS_INFINITY_MICROS;
  const m = ZONED_TIMESTAMP.exec(value);
  if (m === null) throw unreadable(column, 'an ISO-8601 timestamp with an offset', value);
  const [, y, mo, d, h, mi, s, f, zone] = m as unknown as string[];
  const days = daysFromCivil(Number(y), Number(mo), Number(d));
  const seconds =
    days * 86400 +
    Number(h) * 3600 +
    Number(mi) * 60 +
    Number(s ?? '0') -
    offsetSeconds(zone as string);
  const micros = fractionMicros(f, column, value);
  const total = seconds * 1_000_000 + micros;
  return Number.isSafeInteger(total) ? total : BigInt(seconds) * 1_000_000n + BigInt(micros);
}

/** Microseconds since midnight UTC of a ZonedTime string. */
export function zonedTimeMicros(value: unknown, column: string): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') throw notText(column, 'ZonedTime', value);
  const m = ZONED_TIME.exec(value);
  if (m === null) throw unreadable(column, 'an ISO-8601 time with an offset', value);
  const [, h, mi, s, f, zone] = m as unknown as string[];
  const seconds =
    Number(h) * 3600 + Number(mi) * 60 + Number(s ?? '0') - offsetSeconds(zone as string);
  const day = 86400;
  return (((seconds % day) + day) % day) * 1_000_000 + fractionMicros(f, column, value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 16 bytes of a UUID string, in its written order (Parquet's UUID layout). */
export function uuidBytes(value: unknown, column: string): Uint8Array {
  if (value instanceof Uint8Array && value.length === 16) return value;
  if (typeof value !== 'string') throw notText(column, 'Uuid', value);
  if (!UUID.test(value)) throw unreadable(column, 'a UUID (8-4-4-4-12 hex digits)', value);
  const hex = value.replaceAll('-', '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** A VariableScaleDecimal struct as {unscaled, scale}. */
function variableScaleParts(value: unknown, column: string): { unscaled: bigint; scale: number } {
  const v = value as { scale?: unknown; value?: unknown } | null;
  if (
    v === null ||
    typeof v !== 'object' ||
    typeof v.scale !== 'number' ||
    !(v.value instanceof Uint8Array)
  ) {
    throw new RowError(`column '${column}': expected a VariableScaleDecimal {scale, value}`);
  }
  return { unscaled: unscaledFromBytes(v.value), scale: v.scale };
}

const DECIMAL_38_MAX = 10n ** 38n;

/**
 * The unscaled value at `scale` of a VariableScaleDecimal, for DECIMAL(38, scale);
 * throws when it has more fractional digits than `scale` (other than zeros) or more
 * than 38 digits in all.
 */
export function variableScaleUnscaled(value: unknown, scale: number, column: string): bigint {
  const parts = variableScaleParts(value, column);
  let unscaled = parts.unscaled;
  if (parts.scale <= scale) {
    unscaled *= 10n ** BigInt(scale - parts.scale);
  } else {
    const divisor = 10n ** BigInt(parts.scale - scale);
    if (unscaled % divisor !== 0n) {
      throw new RowError(
        `column '${column}': a value of scale ${parts.scale} does not fit DECIMAL(38, ${scale}) without rounding; ` +
          'raise parquet.variable.scale.decimal.scale, or set parquet.variable.scale.decimal.mode=double',
      );
    }
    unscaled /= divisor;
  }
  if (unscaled >= DECIMAL_38_MAX || unscaled <= -DECIMAL_38_MAX) {
    throw new RowError(
      `column '${column}': a value has more than ${38 - scale} integer digits, beyond DECIMAL(38, ${scale}); ` +
        'lower parquet.variable.scale.decimal.scale, or set parquet.variable.scale.decimal.mode=double',
    );
  }
  return unscaled;
}

/** A VariableScaleDecimal as the nearest double. */
export function variableScaleDouble(value: unknown, column: string): number {
  const { unscaled, scale } = variableScaleParts(value, column);
  return Number(`${unscaled}e${-scale}`);
}

function notText(column: string, type: string, value: unknown): RowError {
  return new RowError(`column '${column}': expected the text of an ${type}, got ${typeof value}`);
}

function unreadable(column: string, expected: string, value: string): RowError {
  return new RowError(`column '${column}': '${value}' is not ${expected}; ${AS_IS}`);
}
