/**
 * The reference for the byte writer's property tests: Kafka JsonConverter's JSON, built
 * as a string by a straightforward walk of schema and value (the runtime's first
 * writer, kept here as an independent oracle once the byte writer replaced it).
 * JsonConverter's fixture tests pin the bytes both must produce.
 */
import {
  DataException,
  describeValue,
  isStructValue,
  LogicalType,
  type Schema,
  unscaledFromBytes,
} from '../../../../src/connect/api/index.ts';
import {
  formatBigDecimal,
  formatDouble,
  formatFloat,
} from '../../../../src/connect/converters/java-number-format.ts';
import { type JsonWriterOptions, quote } from '../../../../src/connect/converters/json-writer.ts';

const MS_PER_DAY = 86_400_000;
const INT_MIN = { int8: -0x80, int16: -0x8000, int32: -0x80000000 } as const;

function base64(bytes: Uint8Array): string {
  return `"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`;
}

export class ReferenceJsonWriter {
  private readonly fieldPrefixes = new WeakMap<Schema, string[]>();

  constructor(private readonly options: JsonWriterOptions) {}

  /** JSON text of a value; a null schema means schemaless (types inferred from values). */
  value(schema: Schema | null | undefined, value: unknown): string {
    if (value === null || value === undefined) {
      if (!schema) return 'null';
      if (
        this.options.replaceNullWithDefault &&
        schema.defaultValue !== undefined &&
        schema.defaultValue !== null
      ) {
        return this.value(schema, schema.defaultValue);
      }
      if (schema.optional) return 'null';
      throw new DataException(
        'Conversion error: null value for field that is required and has no default value',
      );
    }
    if (!schema) return this.schemaless(value);
    if (schema.name !== undefined) {
      const logical = this.logical(schema, value);
      if (logical !== undefined) return logical;
    }
    switch (schema.type) {
      case 'int8':
      case 'int16':
      case 'int32': {
        const min = INT_MIN[schema.type];
        if (typeof value === 'number' && Number.isInteger(value) && value >= min && value < -min) {
          return String(value);
        }
        return this.invalid(schema, value);
      }
      case 'int64':
        if (typeof value === 'number' && Number.isInteger(value)) {
          return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
        }
        if (typeof value === 'bigint') return value.toString();
        return this.invalid(schema, value);
      case 'float32':
        return typeof value === 'number' ? formatFloat(value) : this.invalid(schema, value);
      case 'float64':
        return typeof value === 'number' ? formatDouble(value) : this.invalid(schema, value);
      case 'boolean':
        return typeof value === 'boolean' ? String(value) : this.invalid(schema, value);
      case 'string':
        return typeof value === 'string' ? quote(value) : this.invalid(schema, value);
      case 'bytes':
        return value instanceof Uint8Array ? base64(value) : this.invalid(schema, value);
      case 'array': {
        if (!Array.isArray(value)) return this.invalid(schema, value);
        const items = schema.valueSchema!;
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += this.value(items, value[i]);
        }
        return `${out}]`;
      }
      case 'map':
        return this.map(schema, value);
      case 'struct': {
        if (!isStructValue(value)) return this.invalid(schema, value);
        const fields = schema.fields ?? [];
        const prefixes = this.prefixes(schema);
        let out = '{';
        for (let i = 0; i < fields.length; i++) {
          out += prefixes[i];
          out += this.value(fields[i].schema, value[fields[i].name]);
        }
        return `${out}}`;
      }
    }
  }

  /** `"name":` per field, with the comma before all but the first. */
  private prefixes(schema: Schema): string[] {
    let p = this.fieldPrefixes.get(schema);
    if (p === undefined) {
      p = (schema.fields ?? []).map((f, i) => `${i > 0 ? ',' : ''}${quote(f.name)}:`);
      this.fieldPrefixes.set(schema, p);
    }
    return p;
  }

  private logical(schema: Schema, value: unknown): string | undefined {
    switch (schema.name) {
      case LogicalType.Decimal: {
        if (!(value instanceof Uint8Array)) {
          throw new DataException(
            `Invalid type for Decimal: expected the unscaled bytes, got ${describeValue(value)}`,
          );
        }
        if (this.options.decimalFormat === 'BASE64') return base64(value);
        return formatBigDecimal(unscaledFromBytes(value), Number(schema.parameters?.scale ?? 0));
      }
      case LogicalType.Date:
        return value instanceof Date ? String(Math.floor(value.getTime() / MS_PER_DAY)) : undefined;
      case LogicalType.Time:
        return value instanceof Date
          ? String(((value.getTime() % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY)
          : undefined;
      case LogicalType.Timestamp:
        return value instanceof Date ? String(value.getTime()) : undefined;
      default:
        return undefined;
    }
  }

  private map(schema: Schema, value: unknown): string {
    const entries =
      value instanceof Map
        ? value.entries()
        : isStructValue(value)
          ? Object.entries(value).values()
          : null;
    if (entries === null) return this.invalid(schema, value);
    const objectMode = schema.keySchema!.type === 'string';
    let out = objectMode ? '{' : '[';
    let first = true;
    for (const [k, v] of entries) {
      if (!first) out += ',';
      first = false;
      const key = this.value(schema.keySchema, k);
      const val = this.value(schema.valueSchema, v);
      out += objectMode ? `${key}:${val}` : `[${key},${val}]`;
    }
    return out + (objectMode ? '}' : ']');
  }

  private schemaless(value: unknown): string {
    switch (typeof value) {
      case 'number':
        return Number.isInteger(value) && Number.isSafeInteger(value)
          ? String(value)
          : formatDouble(value);
      case 'bigint':
        return value.toString();
      case 'boolean':
        return String(value);
      case 'string':
        return quote(value);
      default:
    }
    if (value instanceof Uint8Array) return base64(value);
    if (Array.isArray(value)) {
      let out = '[';
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ',';
        out += this.value(null, value[i]);
      }
      return `${out}]`;
    }
    if (value instanceof Map) {
      const objectMode = [...value.keys()].every((k) => typeof k === 'string');
      let out = objectMode ? '{' : '[';
      let first = true;
      for (const [k, v] of value) {
        if (!first) out += ',';
        first = false;
        out += objectMode
          ? `${quote(k)}:${this.value(null, v)}`
          : `[${this.value(null, k)},${this.value(null, v)}]`;
      }
      return out + (objectMode ? '}' : ']');
    }
    if (isStructValue(value) && !(value instanceof Date)) {
      let out = '{';
      let first = true;
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        out += `${first ? '' : ','}${quote(k)}:${this.value(null, value[k])}`;
        first = false;
      }
      return `${out}}`;
    }
    throw new DataException(`${describeValue(value)} does not have a corresponding schema type`);
  }

  private invalid(schema: Schema, value: unknown): never {
    throw new DataException(
      `Invalid type for ${schema.type}${schema.name ? ` (${schema.name})` : ''}: ${describeValue(value)}`,
    );
  }
}
