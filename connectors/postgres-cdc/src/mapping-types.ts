/**
 * What every column mapping shares: the configured modes (Debezium's keys of the same
 * names), the mapping's shape, the error a value without a representation raises, and
 * the Debezium schema names. type-mapping.ts re-exports all of it; the per-family
 * mapping modules (temporal-mapping.ts, extension-mapping.ts) import it from here so
 * that none imports type-mapping.ts back.
 */
import { ConnectException, type Schema } from '../../../src/connect/api/index.ts';
import type { BinaryHandlingMode } from './binary-values.ts';
import type { ColumnMappers } from './column-mappers.ts';
import type { MessageKeyColumns } from './message-key-columns.ts';
import type { EventNames } from './naming-config.ts';
import type { TableId } from './table-filter.ts';

export type { BinaryHandlingMode } from './binary-values.ts';
export type DecimalHandlingMode = 'precise' | 'double' | 'string';
export type TimePrecisionMode =
  | 'adaptive'
  | 'adaptive_time_microseconds'
  | 'connect'
  | 'isostring'
  | 'microseconds'
  | 'nanoseconds';
export type IntervalHandlingMode = 'numeric' | 'string';
export type HstoreHandlingMode = 'json' | 'map';

/** column.propagate.source.type / datatype.propagate.source.type, compiled. */
export interface PropagateSourceType {
  /** Matched against 'schema.table.column' in full. */
  columns: readonly RegExp[];
  /** Matched against the column's type name ('varchar', 'public.mydomain') in full. */
  datatypes: readonly RegExp[];
}

export interface MappingModes {
  decimalHandlingMode: DecimalHandlingMode;
  timePrecisionMode: TimePrecisionMode;
  /** include.unknown.datatypes (unknown-datatypes.ts); false when absent. */
  includeUnknownDatatypes?: boolean;
  /** interval.handling.mode; numeric when absent. */
  intervalHandlingMode?: IntervalHandlingMode;
  /** binary.handling.mode; bytes when absent. */
  binaryHandlingMode?: BinaryHandlingMode;
  /** hstore.handling.mode; json when absent. */
  hstoreHandlingMode?: HstoreHandlingMode;
  /** money.fraction.digits; 2 when absent. */
  moneyFractionDigits?: number;
  /** Which columns' schemas carry __debezium.source.column.* parameters; none when absent. */
  propagateSourceType?: PropagateSourceType;
  /*
   * The three below shape a table's schemas rather than map a type; they travel with the
   * modes because the snapshot and the stream both build every table schema from them
   * (table-schema.ts), so neither can leave them out.
   */
  /** message.key.columns (message-key-columns.ts); the table's own key when absent. */
  messageKeyColumns?: MessageKeyColumns;
  /** column.mask.*, column.truncate.* (column-mappers.ts); values as they are when absent. */
  columnMappers?: ColumnMappers;
  /**
   * Topic, schema and field names (naming-config.ts); when absent, Debezium's defaults:
   * topic <prefix>.<schema>.<table>, names as they are.
   */
  names?: EventNames;
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
  NanoTime: 'io.debezium.time.NanoTime',
  Timestamp: 'io.debezium.time.Timestamp',
  MicroTimestamp: 'io.debezium.time.MicroTimestamp',
  NanoTimestamp: 'io.debezium.time.NanoTimestamp',
  IsoDate: 'io.debezium.time.IsoDate',
  IsoTime: 'io.debezium.time.IsoTime',
  IsoTimestamp: 'io.debezium.time.IsoTimestamp',
  ZonedTimestamp: 'io.debezium.time.ZonedTimestamp',
  ZonedTime: 'io.debezium.time.ZonedTime',
  MicroDuration: 'io.debezium.time.MicroDuration',
  Interval: 'io.debezium.time.Interval',
  VariableScaleDecimal: 'io.debezium.data.VariableScaleDecimal',
  Uuid: 'io.debezium.data.Uuid',
  Json: 'io.debezium.data.Json',
  Xml: 'io.debezium.data.Xml',
  Enum: 'io.debezium.data.Enum',
  Bits: 'io.debezium.data.Bits',
  Ltree: 'io.debezium.data.Ltree',
  Tsvector: 'io.debezium.data.Tsvector',
} as const;

export const named = (schema: Schema, name: string, version?: number): Schema =>
  version === undefined ? { ...schema, name } : { ...schema, name, version };

export const identity = (s: string) => s;

/**
 * `convert`, with any error it throws on a value turned into an UnrepresentableValueError
 * naming table, column and value: text a parser cannot read fails the task by name
 * instead of sending a wrong value or a null.
 */
export function guarded(
  where: ColumnRef,
  what: string,
  convert: (text: string) => unknown,
): (text: string) => unknown {
  return (text) => {
    try {
      return convert(text);
    } catch (error) {
      if (error instanceof UnrepresentableValueError) throw error;
      throw new UnrepresentableValueError(
        where,
        text,
        `cannot be read as ${what} (${(error as Error).message}); the task stops rather than ` +
          'send a wrong value. Leave the column out with column.exclude.list to go on without it',
      );
    }
  };
}
