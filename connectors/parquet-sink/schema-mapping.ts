/**
 * Connect schemas -> Parquet schemas, and Connect values -> the values the nested-row
 * encoder (hyparquet-writer) takes. Flat rows never use the converters: their
 * columns are typed arrays (flat-columns.ts).
 *
 * Mapping (Kafka Connect's AvroData/ParquetData conventions, so files match what
 * Confluent's sink writes):
 *   int8/int16            INT32 with INT_8/INT_16      int32  INT32
 *   int64                 INT64 (values become bigint) float32/float64  FLOAT/DOUBLE
 *   boolean               BOOLEAN                      string  BYTE_ARRAY UTF8
 *   bytes                 BYTE_ARRAY
 *   struct                group of its fields, in declaration order
 *   array                 3-level LIST: <name> (LIST) { repeated group list { element } }
 *   map                   <name> (MAP) { repeated group key_value { key; value } }
 *   optional              OPTIONAL, else REQUIRED
 * Logical types (values keep their physical encoding, see src/connect/api/schema.ts):
 *   Decimal                          DECIMAL(precision, scale) on BYTE_ARRAY; precision from
 *                                    `connect.decimal.precision` (Debezium sets it), else 38
 *   Date, io.debezium.time.Date      DATE            Time, io.debezium.time.Time  TIME_MILLIS
 *   io.debezium.time.MicroTime       TIME_MICROS     io.debezium.time.NanoTime    TIME(NANOS)
 *   Timestamp, io.debezium.time.Timestamp  TIMESTAMP_MILLIS
 *   io.debezium.time.MicroTimestamp  TIMESTAMP_MICROS
 *   io.debezium.time.NanoTimestamp   TIMESTAMP(NANOS)
 * Debezium's semantic types with parquet.debezium.logical.types=native (the default;
 * debezium-types.ts parses the values):
 *   io.debezium.time.ZonedTimestamp  TIMESTAMP(MICROS, UTC)   ZonedTime  TIME(MICROS, UTC)
 *   io.debezium.data.Uuid            UUID (FIXED_LEN_BYTE_ARRAY(16))
 *   io.debezium.data.Json            JSON
 *   io.debezium.data.VariableScaleDecimal  DECIMAL(38, s) or DOUBLE
 * With `as-is` (Confluent's behaviour) they keep their physical type (string, struct),
 * as Enum, Xml and the other string types always do.
 * A value schema that is not a struct becomes one column named `value`.
 *
 * Each top-level column carries a converter that is undefined when values pass
 * through unchanged, so the hot path (flat CDC rows) does no per-value work beyond
 * int64 -> bigint.
 */
import type { SchemaElement } from 'hyparquet-writer';
import { LogicalType, type Schema, unscaledFromBytes } from '../../src/connect/api/index.ts';
import {
  DEFAULT_SEMANTIC_TYPES,
  DebeziumType,
  type SemanticTypes,
  uuidBytes,
  variableScaleDouble,
  variableScaleUnscaled,
  zonedTimeMicros,
  zonedTimestampMicros,
} from './debezium-types.ts';
import { type FlatKind, flatKind } from './flat-columns.ts';

export type ValueConverter = (value: unknown) => unknown;

export interface ParquetColumn {
  name: string;
  /** Connect schema of the column, for type checks and schema evolution. */
  schema: Schema;
  optional: boolean;
  /** Undefined means the Connect value is already what the encoder takes. */
  convert?: ValueConverter;
  /** The flat builder kind (flat-columns.ts), undefined for a nested column. */
  flat: FlatKind | undefined;
}

export interface ParquetSchema {
  /** Depth-first schema elements, root first, as the Parquet footer stores them. */
  elements: SchemaElement[];
  columns: ParquetColumn[];
  /** The Connect schema the value columns came from. */
  valueSchema: Schema;
  /** How Debezium's semantic types were mapped, for the row buffer's builders. */
  types: SemanticTypes;
}

export interface MappingOptions {
  /** Write every top-level value column OPTIONAL (behavior.on.null.values=write). */
  nullableColumns?: boolean;
  /** parquet.debezium.logical.types and parquet.variable.scale.decimal.*; native by default. */
  types?: SemanticTypes;
}

export class SchemaMappingError extends Error {
  readonly kind = 'schema-mapping';
}

const DEFAULT_DECIMAL_PRECISION = 38;

/** The column name used when the value schema is not a struct. */
export const SINGLE_VALUE_COLUMN = 'value';

export function toParquetSchema(valueSchema: Schema, options: MappingOptions = {}): ParquetSchema {
  const top: Array<{ name: string; schema: Schema }> =
    valueSchema.type === 'struct'
      ? (valueSchema.fields ?? []).map((f) => ({ name: f.name, schema: f.schema }))
      : [{ name: SINGLE_VALUE_COLUMN, schema: valueSchema }];
  const all = [
    ...top.map((c) =>
      options.nullableColumns ? { name: c.name, schema: { ...c.schema, optional: true } } : c,
    ),
  ];
  const names = new Set<string>();
  for (const c of all) {
    if (names.has(c.name)) throw new SchemaMappingError(`duplicate column name '${c.name}'`);
    names.add(c.name);
  }
  if (all.length === 0) throw new SchemaMappingError('a Parquet file needs at least one column');
  const types = options.types ?? DEFAULT_SEMANTIC_TYPES;
  const elements: SchemaElement[] = [{ name: 'schema', num_children: all.length }];
  const columns: ParquetColumn[] = [];
  for (const c of all) {
    appendElements(elements, c.name, c.schema, types);
    columns.push({
      name: c.name,
      schema: c.schema,
      optional: c.schema.optional,
      convert: converterFor(c.schema, types, c.name),
      flat: flatKind(c.schema, types),
    });
  }
  return { elements, columns, valueSchema, types };
}

function repetition(schema: Schema): 'OPTIONAL' | 'REQUIRED' {
  return schema.optional ? 'OPTIONAL' : 'REQUIRED';
}

function appendElements(
  out: SchemaElement[],
  name: string,
  schema: Schema,
  types: SemanticTypes,
): void {
  const repetition_type = repetition(schema);
  if (types.debeziumTypes === 'native' && schema.name === DebeziumType.VariableScaleDecimal) {
    const mapping = types.variableScaleDecimal;
    out.push(
      mapping.mode === 'double'
        ? { name, repetition_type, type: 'DOUBLE' }
        : {
            name,
            repetition_type,
            type: 'BYTE_ARRAY',
            converted_type: 'DECIMAL',
            scale: mapping.scale,
            precision: DEFAULT_DECIMAL_PRECISION,
          },
    );
    return;
  }
  switch (schema.type) {
    case 'struct': {
      const fields = schema.fields ?? [];
      if (fields.length === 0) {
        throw new SchemaMappingError(`struct '${name}' has no fields; Parquet groups need one`);
      }
      out.push({ name, repetition_type, num_children: fields.length });
      for (const f of fields) appendElements(out, f.name, f.schema, types);
      return;
    }
    case 'array': {
      if (!schema.valueSchema) throw new SchemaMappingError(`array '${name}' has no value schema`);
      out.push({ name, repetition_type, num_children: 1, converted_type: 'LIST' });
      out.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
      appendElements(out, 'element', schema.valueSchema, types);
      return;
    }
    case 'map': {
      if (!schema.keySchema || !schema.valueSchema) {
        throw new SchemaMappingError(`map '${name}' needs key and value schemas`);
      }
      out.push({ name, repetition_type, num_children: 1, converted_type: 'MAP' });
      out.push({ name: 'key_value', repetition_type: 'REPEATED', num_children: 2 });
      // Parquet map keys are always required.
      appendElements(out, 'key', { ...schema.keySchema, optional: false }, types);
      appendElements(out, 'value', schema.valueSchema, types);
      return;
    }
    default:
      out.push({ name, repetition_type, ...primitive(name, schema, types) });
  }
}

function primitive(
  name: string,
  schema: Schema,
  types: SemanticTypes,
): Omit<SchemaElement, 'name'> {
  if (types.debeziumTypes === 'native' && schema.type === 'string') {
    switch (schema.name) {
      case DebeziumType.ZonedTimestamp:
        return {
          type: 'INT64',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
        };
      case DebeziumType.ZonedTime:
        return {
          type: 'INT64',
          logical_type: { type: 'TIME', isAdjustedToUTC: true, unit: 'MICROS' },
        };
      case DebeziumType.Uuid:
        return { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } };
      case DebeziumType.Json:
        // The logical type alone: hyparquet-writer re-serializes values of converted
        // type JSON; the flat encoder writes the converted type beside it.
        return { type: 'BYTE_ARRAY', logical_type: { type: 'JSON' } };
    }
  }
  switch (schema.name) {
    case LogicalType.Decimal: {
      const scale = Number(schema.parameters?.scale ?? 0);
      const precision = Number(
        schema.parameters?.['connect.decimal.precision'] ?? DEFAULT_DECIMAL_PRECISION,
      );
      return { type: 'BYTE_ARRAY', converted_type: 'DECIMAL', scale, precision };
    }
    case LogicalType.Date:
    case 'io.debezium.time.Date':
      return { type: 'INT32', converted_type: 'DATE' };
    case LogicalType.Time:
    case 'io.debezium.time.Time':
      return { type: 'INT32', converted_type: 'TIME_MILLIS' };
    case 'io.debezium.time.MicroTime':
      return { type: 'INT64', converted_type: 'TIME_MICROS' };
    case 'io.debezium.time.NanoTime':
      return {
        type: 'INT64',
        logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'NANOS' },
      };
    case LogicalType.Timestamp:
    case 'io.debezium.time.Timestamp':
      return { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' };
    case 'io.debezium.time.MicroTimestamp':
      return { type: 'INT64', converted_type: 'TIMESTAMP_MICROS' };
    case 'io.debezium.time.NanoTimestamp':
      return {
        type: 'INT64',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' },
      };
  }
  switch (schema.type) {
    case 'int8':
      return { type: 'INT32', converted_type: 'INT_8' };
    case 'int16':
      return { type: 'INT32', converted_type: 'INT_16' };
    case 'int32':
      return { type: 'INT32' };
    case 'int64':
      return { type: 'INT64' };
    case 'float32':
      return { type: 'FLOAT' };
    case 'float64':
      return { type: 'DOUBLE' };
    case 'boolean':
      return { type: 'BOOLEAN' };
    case 'string':
      return { type: 'BYTE_ARRAY', converted_type: 'UTF8' };
    case 'bytes':
      return { type: 'BYTE_ARRAY' };
    default:
      throw new SchemaMappingError(`column '${name}' has unsupported type ${schema.type}`);
  }
}

/** int64 values arrive as numbers (or bigint beyond 2^53); the INT64 encoder takes bigint. */
const toBigInt: ValueConverter = (v) =>
  v === null || v === undefined || typeof v === 'bigint' ? v : BigInt(v as number);

/** Decimal values are unscaled two's-complement big-endian bytes; the encoder takes bigint. */
const decimalToBigInt: ValueConverter = (v) => {
  if (v === null || v === undefined || typeof v === 'bigint') return v;
  if (!(v instanceof Uint8Array)) {
    throw new SchemaMappingError(`a Decimal value must be bytes, got ${typeof v}`);
  }
  return unscaledFromBytes(v);
};

const utf8 = new TextEncoder();

/** Converters of Debezium's semantic types in native mode (values as the encoder takes them). */
function semanticConverter(
  schema: Schema,
  types: SemanticTypes,
  column: string,
): ValueConverter | undefined {
  if (types.debeziumTypes !== 'native') return undefined;
  const nullable =
    (f: (v: unknown) => unknown): ValueConverter =>
    (v) =>
      v === null || v === undefined ? v : f(v);
  switch (schema.name) {
    case DebeziumType.ZonedTimestamp:
      return nullable((v) => BigInt(zonedTimestampMicros(v, column)));
    case DebeziumType.ZonedTime:
      return nullable((v) => BigInt(zonedTimeMicros(v, column)));
    case DebeziumType.Uuid:
      return nullable((v) => uuidBytes(v, column));
    case DebeziumType.Json:
      return nullable((v) => (typeof v === 'string' ? utf8.encode(v) : v));
    case DebeziumType.VariableScaleDecimal: {
      const mapping = types.variableScaleDecimal;
      if (mapping.mode === 'double')
        return nullable((v) => (typeof v === 'number' ? v : variableScaleDouble(v, column)));
      return nullable((v) =>
        typeof v === 'bigint' || v instanceof Uint8Array
          ? decimalToBigInt(v)
          : variableScaleUnscaled(v, mapping.scale, column),
      );
    }
  }
  return undefined;
}

/** The converter for a column, or undefined when its values pass through as they are. */
export function converterFor(
  schema: Schema,
  types: SemanticTypes = DEFAULT_SEMANTIC_TYPES,
  column = '',
): ValueConverter | undefined {
  if (schema.name === LogicalType.Decimal) return decimalToBigInt;
  const semantic = semanticConverter(schema, types, column);
  if (semantic !== undefined) return semantic;
  switch (schema.type) {
    case 'int64':
      // The encoder converts numbers itself for TIMESTAMP types, not for plain INT64 or TIME.
      return isConvertedInt64(schema) ? undefined : toBigInt;
    case 'struct': {
      const fields = (schema.fields ?? []).map((f) => ({
        name: f.name,
        convert: converterFor(f.schema, types, `${column}.${f.name}`),
      }));
      if (fields.every((f) => f.convert === undefined)) return undefined;
      return (v) => {
        if (v === null || v === undefined) return v;
        const obj = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const f of fields) out[f.name] = f.convert ? f.convert(obj[f.name]) : obj[f.name];
        return out;
      };
    }
    case 'array': {
      const element = schema.valueSchema
        ? converterFor(schema.valueSchema, types, column)
        : undefined;
      if (!element) return undefined;
      return (v) => (v === null || v === undefined ? v : (v as unknown[]).map(element));
    }
    case 'map': {
      const key = schema.keySchema ? converterFor(schema.keySchema, types, column) : undefined;
      const value = schema.valueSchema
        ? converterFor(schema.valueSchema, types, column)
        : undefined;
      if (!key && !value) return undefined;
      return (v) => {
        if (v === null || v === undefined) return v;
        const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as object);
        return entries.map(([k, x]) => ({
          key: key ? key(k) : k,
          value: value ? value(x) : x,
        }));
      };
    }
    default:
      return undefined;
  }
}

function isConvertedInt64(schema: Schema): boolean {
  return (
    schema.name === LogicalType.Timestamp ||
    schema.name === 'io.debezium.time.Timestamp' ||
    schema.name === 'io.debezium.time.MicroTimestamp' ||
    schema.name === 'io.debezium.time.NanoTimestamp'
  );
}
