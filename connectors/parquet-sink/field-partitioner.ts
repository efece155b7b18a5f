/**
 * FieldPartitioner: folders named by the values of `partition.field.name`, exactly as
 * Confluent's io.confluent.connect.storage.partitioner.FieldPartitioner names them:
 *
 *   <name1>=<value1><directory.delim><name2>=<value2>...    in the order listed
 *
 * Confluent's rules, followed here:
 *   - the value must be a struct (Confluent: a Struct; anything else is a
 *     PartitionException, an errant record);
 *   - each name is looked up in the value's schema, dots reaching into nested structs
 *     (record-field-path.ts); a name the schema does not have fails the task
 *     (Confluent's DataException "Field '<name>' is not present in the schema.", which
 *     its sink does not catch);
 *   - a null value, or a null struct on the way to it, gives `<name>=null`;
 *   - the field's schema type decides: INT8, INT16, INT32, INT64 as decimal digits,
 *     STRING as it is, BOOLEAN as true/false; every other type (FLOAT32/64, BYTES and
 *     so Decimal, ARRAY, MAP, STRUCT) is a PartitionException, an errant record. Date,
 *     Time and Timestamp (INT32/INT64 logical types) fail the task: Confluent casts
 *     their java.util.Date value to a Number and throws a ClassCastException;
 *   - values are not escaped: a '/' in a value adds a folder level, an '=' stays, as
 *     in Confluent's sink (so a bucket is laid out the same; Hive-style readers see
 *     the text as it is).
 *
 * Beyond Confluent: a schemaless value (a plain object, as JsonConverter gives with
 * schemas.enable=false) is refused by Confluent's FieldPartitioner, while this sink
 * writes such values (schema-inference.ts). They are partitioned by the same rules,
 * applied to their JSON types: an integer number or bigint as digits, a string, a
 * boolean; an absent or null field gives `<name>=null`; a fractional number, object,
 * array or bytes is an errant record.
 */
import {
  ConnectException,
  LogicalType,
  type Schema,
  type SinkRecord,
} from '../../src/connect/api/index.ts';
import { type Partitioner, PartitionerError } from './partitioner.ts';
import { nestedField, nestedValue, pathParts } from './record-field-path.ts';

interface ResolvedField {
  name: string;
  parts: string[];
  /** The field's schema, for schemaful values. */
  schema?: Schema;
}

const SUPPORTED = 'INT8, INT16, INT32, INT64, STRING and BOOLEAN are';
const DATE_TYPES: ReadonlySet<string | undefined> = new Set([
  LogicalType.Date,
  LogicalType.Time,
  LogicalType.Timestamp,
]);

export class FieldPartitioner implements Partitioner {
  private readonly parts: string[][];
  /** Field lookups of the last value schema seen (records of a partition share one). */
  private lastSchema: Schema | undefined;
  private lastResolved: ResolvedField[] = [];

  constructor(
    private readonly fieldNames: readonly string[],
    private readonly dirDelim = '/',
  ) {
    if (fieldNames.length === 0) {
      throw new PartitionerError('FieldPartitioner needs partition.field.name');
    }
    this.parts = fieldNames.map(pathParts);
  }

  encodePartition(record: SinkRecord): string {
    const value = record.value;
    if (value === null || value === undefined || typeof value !== 'object') {
      throw new PartitionerError(
        `cannot partition ${where(record)} by partition.field.name: the value is not a struct`,
      );
    }
    const schema = record.valueSchema;
    if (schema === null || schema === undefined) return this.encodeSchemaless(record, value);
    if (schema.type !== 'struct') {
      throw new PartitionerError(
        `cannot partition ${where(record)} by partition.field.name: the value is a ${schema.type}, not a struct`,
      );
    }
    const levels: string[] = [];
    for (const f of this.resolve(schema)) {
      const v = nestedValue(value, f.parts);
      levels.push(`${f.name}=${v === undefined ? 'null' : encodeTyped(record, f, v)}`);
    }
    return levels.join(this.dirDelim);
  }

  recordTime(record: SinkRecord): number | undefined {
    return record.timestamp ?? undefined;
  }

  private encodeSchemaless(record: SinkRecord, value: object): string {
    const levels: string[] = [];
    for (let i = 0; i < this.fieldNames.length; i++) {
      const name = this.fieldNames[i] as string;
      const v = nestedValue(value, this.parts[i] as string[]);
      levels.push(`${name}=${v === undefined ? 'null' : encodeUntyped(record, name, v)}`);
    }
    return levels.join(this.dirDelim);
  }

  private resolve(schema: Schema): ResolvedField[] {
    if (schema === this.lastSchema) return this.lastResolved;
    const resolved = this.fieldNames.map((name, i) => {
      const parts = this.parts[i] as string[];
      const lookup = nestedField(schema, parts);
      if ('notStruct' in lookup) {
        throw new ConnectException(
          `Unable to get field '${name}' from the value schema: '${lookup.notStruct}' is not a struct`,
        );
      }
      if ('missing' in lookup) {
        throw new ConnectException(
          `Field '${name}' is not present in the schema (partition.field.name; Confluent's FieldPartitioner fails the task here too)`,
        );
      }
      return { name, parts, schema: lookup.found.schema };
    });
    this.lastSchema = schema;
    this.lastResolved = resolved;
    return resolved;
  }
}

function where(record: SinkRecord): string {
  return `${record.topic}-${record.kafkaPartition}@${record.kafkaOffset}`;
}

function encodeTyped(record: SinkRecord, f: ResolvedField, v: unknown): string {
  const schema = f.schema as Schema;
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
    case 'int64':
      if (DATE_TYPES.has(schema.name)) {
        throw new ConnectException(
          `partition field '${f.name}' of ${where(record)} is a ${schema.name}: Confluent's FieldPartitioner fails on it (a ClassCastException), so it cannot partition here either; partition by a TimeBased partitioner with timestamp.field, or by an INT or STRING copy of the field`,
        );
      }
      return String(v);
    case 'string':
      return String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      throw new PartitionerError(
        `partition field '${f.name}' of ${where(record)} is not a primitive Confluent's FieldPartitioner takes: type ${schema.type.toUpperCase()}${schema.name ? ` (${schema.name})` : ''} is not supported as a partition key (${SUPPORTED})`,
      );
  }
}

function encodeUntyped(record: SinkRecord, name: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  const kind =
    typeof v === 'number'
      ? 'a fractional number'
      : Array.isArray(v)
        ? 'an array'
        : v instanceof Uint8Array
          ? 'bytes'
          : 'an object';
  throw new PartitionerError(
    `partition field '${name}' of ${where(record)} is not a primitive Confluent's FieldPartitioner takes: ${kind} is not supported as a partition key (integers, strings and booleans are)`,
  );
}
