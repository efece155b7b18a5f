/**
 * Helpers shared by transforms that work on either the key or the value of a record
 * (Kafka's `$Key` / `$Value` variants), and for deriving struct schemas.
 */
import {
  type ConnectRecord,
  DataException,
  describeValue,
  type Field,
  isStructValue,
  type Schema,
} from '../api/index.ts';

export type RecordPart = 'key' | 'value';

export function partSchema(record: ConnectRecord, part: RecordPart): Schema | null {
  return (part === 'key' ? record.keySchema : record.valueSchema) ?? null;
}

export function partValue(record: ConnectRecord, part: RecordPart): unknown {
  return part === 'key' ? record.key : record.value;
}

/** The record with its key or value (and that part's schema) replaced. */
export function withPart<R extends ConnectRecord>(
  record: R,
  part: RecordPart,
  schema: Schema | null,
  value: unknown,
): R {
  return part === 'key'
    ? { ...record, keySchema: schema, key: value }
    : { ...record, valueSchema: schema, value };
}

/** A struct schema with the same identity (name, version, doc, optional) and new fields. */
export function structWithFields(
  base: Schema,
  fields: ReadonlyArray<readonly [string, Schema]>,
): Schema {
  const out: Schema = {
    ...base,
    fields: fields.map(([name, schema], index): Field => ({ name, index, schema })),
  };
  // A default of the old shape would not match the new fields.
  delete out.defaultValue;
  return out;
}

/** The struct value of a schema'd record part, or a DataException naming the purpose. */
export function requireStruct(value: unknown, purpose: string): Record<string, unknown> {
  if (!isStructValue(value)) {
    throw new DataException(
      `Only Struct objects supported for [${purpose}], found: ${describeValue(value)}`,
    );
  }
  return value;
}

/** A schemaless record part as a plain object (a Map is copied into one). */
export function requireMap(value: unknown, purpose: string): Record<string, unknown> {
  if (value instanceof Map) return Object.fromEntries(value);
  if (!isStructValue(value)) {
    throw new DataException(
      `Only Map objects supported in absence of schema for [${purpose}], found: ${describeValue(value)}`,
    );
  }
  return value;
}

/** Is this a sink record (it has a Kafka offset)? */
export function isSinkRecord(
  record: ConnectRecord,
): record is ConnectRecord & { kafkaOffset: number } {
  return typeof (record as { kafkaOffset?: unknown }).kafkaOffset === 'number';
}
