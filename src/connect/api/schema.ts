/**
 * Connect schemas: the type system records carry between connectors, transforms and
 * converters, the same as Kafka Connect's `org.apache.kafka.connect.data` so that
 * JsonConverter envelopes, Debezium events and Parquet mappings line up one to one.
 *
 * Values are plain JavaScript, chosen for speed and for being easy to build:
 *   int8/int16/int32/float32/float64  number
 *   int64                              number when it fits 2^53 exactly, else bigint
 *   boolean / string                   boolean / string
 *   bytes                              Uint8Array (Buffer is fine)
 *   array / map                        Array / Map (or a plain object with string keys)
 *   struct                             a plain object keyed by field name
 * Logical types keep their physical encoding as value, exactly as they travel in
 * JSON and Parquet: Date is days since the epoch (int32), Time is milliseconds of the
 * day (int32), Timestamp is epoch milliseconds (int64), Decimal is the unscaled
 * two's-complement big-endian integer (bytes) with the scale in `parameters.scale`.
 * Debezium's names (io.debezium.time.MicroTimestamp, ...) are ordinary named schemas.
 */

export type SchemaType =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float32'
  | 'float64'
  | 'boolean'
  | 'string'
  | 'bytes'
  | 'array'
  | 'map'
  | 'struct';

export interface Field {
  name: string;
  index: number;
  schema: Schema;
}

export interface Schema {
  type: SchemaType;
  optional: boolean;
  defaultValue?: unknown;
  name?: string;
  version?: number;
  doc?: string;
  parameters?: Record<string, string>;
  /** struct only, in declaration order. */
  fields?: Field[];
  /** map only. */
  keySchema?: Schema;
  /** array and map only. */
  valueSchema?: Schema;
}

/** Kafka Connect's logical type names. */
export const LogicalType = {
  Decimal: 'org.apache.kafka.connect.data.Decimal',
  Date: 'org.apache.kafka.connect.data.Date',
  Time: 'org.apache.kafka.connect.data.Time',
  Timestamp: 'org.apache.kafka.connect.data.Timestamp',
} as const;

export type SchemaOptions = Partial<Omit<Schema, 'type' | 'fields' | 'keySchema' | 'valueSchema'>>;

function make(type: SchemaType, opts: SchemaOptions = {}): Schema {
  return { optional: false, ...opts, type };
}

/** Builders in the spirit of SchemaBuilder: `Schemas.int32({ optional: true })`. */
export const Schemas = {
  int8: (o?: SchemaOptions) => make('int8', o),
  int16: (o?: SchemaOptions) => make('int16', o),
  int32: (o?: SchemaOptions) => make('int32', o),
  int64: (o?: SchemaOptions) => make('int64', o),
  float32: (o?: SchemaOptions) => make('float32', o),
  float64: (o?: SchemaOptions) => make('float64', o),
  boolean: (o?: SchemaOptions) => make('boolean', o),
  string: (o?: SchemaOptions) => make('string', o),
  bytes: (o?: SchemaOptions) => make('bytes', o),
  array: (valueSchema: Schema, o?: SchemaOptions): Schema => ({ ...make('array', o), valueSchema }),
  map: (keySchema: Schema, valueSchema: Schema, o?: SchemaOptions): Schema => ({
    ...make('map', o),
    keySchema,
    valueSchema,
  }),
  struct: (fields: Array<[name: string, schema: Schema]>, o?: SchemaOptions): Schema => ({
    ...make('struct', o),
    fields: fields.map(([name, schema], index) => ({ name, index, schema })),
  }),
  decimal: (scale: number, o: SchemaOptions = {}): Schema =>
    make('bytes', {
      ...o,
      name: LogicalType.Decimal,
      version: 1,
      parameters: { ...o.parameters, scale: String(scale) },
    }),
  date: (o?: SchemaOptions) => make('int32', { ...o, name: LogicalType.Date, version: 1 }),
  time: (o?: SchemaOptions) => make('int32', { ...o, name: LogicalType.Time, version: 1 }),
  timestamp: (o?: SchemaOptions) =>
    make('int64', { ...o, name: LogicalType.Timestamp, version: 1 }),
};

/** The same schema, optional. */
export function optional(schema: Schema): Schema {
  return schema.optional ? schema : { ...schema, optional: true };
}

export function field(schema: Schema, name: string): Field | undefined {
  return schema.fields?.find((f) => f.name === name);
}
