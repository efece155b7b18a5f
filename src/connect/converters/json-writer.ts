/**
 * Connect data (schema.ts conventions) to JSON text, byte for byte as Kafka's
 * JsonConverter writes it through Jackson: compact, fields in schema order, float32
 * and float64 as Java prints them, bytes as base64, int64 exact (bigint included),
 * maps with string keys as objects and other maps as [[key, value], ...] pairs.
 *
 * Schema JSON uses Kafka's layout: "type" ("float"/"double" for float32/float64),
 * then "fields" | "items" | "keys","values", then "optional", "name", "version",
 * "doc", "parameters", "default"; a struct field is its schema's object with "field"
 * appended. Schema JSON is computed once per schema object (WeakMap). Values are
 * written by json-byte-writer.ts straight into shared slabs; struct properties not in
 * the schema are ignored, as a Struct cannot hold them.
 */
import type { Schema } from '../api/index.ts';
import { JsonByteWriter } from './json-byte-writer.ts';

export type DecimalFormat = 'BASE64' | 'NUMERIC';

export interface JsonWriterOptions {
  decimalFormat: DecimalFormat;
  replaceNullWithDefault: boolean;
}

const JSON_TYPE_NAME: Record<Schema['type'], string> = {
  int8: 'int8',
  int16: 'int16',
  int32: 'int32',
  int64: 'int64',
  float32: 'float',
  float64: 'double',
  boolean: 'boolean',
  string: 'string',
  bytes: 'bytes',
  array: 'array',
  map: 'map',
  struct: 'struct',
};

/** A JSON string literal as Jackson writes it (control characters as upper-case \u00XX). */
export function quote(s: string): string {
  const q = JSON.stringify(s);
  if (q.indexOf('\\u') < 0) return q;
  // JSON.stringify writes lower-case hex; only an odd run of backslashes starts an escape.
  return q.replace(/(\\+)u([0-9a-f]{4})/g, (m, slashes: string, hex: string) =>
    slashes.length % 2 === 1 ? `${slashes}u${hex.toUpperCase()}` : m,
  );
}

export class JsonWriter {
  private readonly schemaCache = new WeakMap<Schema, string>();
  private bytes: JsonByteWriter | undefined;

  constructor(private readonly options: JsonWriterOptions) {}

  /**
   * The bytes of value(schema, value), written straight into a shared slab (see
   * json-byte-writer.ts). With a head (an envelope's `{"schema":...,"payload":`), the
   * head, the value, and the envelope's closing brace.
   */
  toBuffer(schema: Schema | null, value: unknown, head: Buffer | null): Buffer {
    this.bytes ??= new JsonByteWriter(this.options);
    return this.bytes.toBuffer(schema, value, head);
  }

  /** Kafka's JSON for a schema (cached per schema object). */
  schemaJson(schema: Schema): string {
    let json = this.schemaCache.get(schema);
    if (json === undefined) {
      json = this.buildSchemaJson(schema);
      this.schemaCache.set(schema, json);
    }
    return json;
  }

  private buildSchemaJson(schema: Schema): string {
    let out = `{"type":"${JSON_TYPE_NAME[schema.type]}"`;
    switch (schema.type) {
      case 'struct':
        out += ',"fields":[';
        (schema.fields ?? []).forEach((f, i) => {
          const fieldSchema = this.schemaJson(f.schema);
          out += `${i > 0 ? ',' : ''}${fieldSchema.slice(0, -1)},"field":${quote(f.name)}}`;
        });
        out += ']';
        break;
      case 'array':
        out += `,"items":${this.schemaJson(schema.valueSchema!)}`;
        break;
      case 'map':
        out += `,"keys":${this.schemaJson(schema.keySchema!)}`;
        out += `,"values":${this.schemaJson(schema.valueSchema!)}`;
        break;
      default:
    }
    out += `,"optional":${schema.optional}`;
    if (schema.name !== undefined) out += `,"name":${quote(schema.name)}`;
    if (schema.version !== undefined) out += `,"version":${schema.version}`;
    if (schema.doc !== undefined) out += `,"doc":${quote(schema.doc)}`;
    if (schema.parameters !== undefined) {
      out += ',"parameters":{';
      let first = true;
      for (const [k, v] of Object.entries(schema.parameters)) {
        out += `${first ? '' : ','}${quote(k)}:${quote(v)}`;
        first = false;
      }
      out += '}';
    }
    if (schema.defaultValue !== undefined && schema.defaultValue !== null) {
      out += `,"default":${this.value(schema, schema.defaultValue)}`;
    }
    return `${out}}`;
  }

  /**
   * JSON text of a value (a null schema means schemaless): the byte writer's output as
   * a string. Only schema defaults need text; messages go through toBuffer.
   */
  value(schema: Schema | null | undefined, value: unknown): string {
    return this.toBuffer(schema ?? null, value, null).toString('utf8');
  }
}
