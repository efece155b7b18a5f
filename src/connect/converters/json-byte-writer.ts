/**
 * Connect data to JSON bytes, as Kafka's JsonConverter (Jackson) writes them, as UTF-8
 * straight into a shared output slab (json-byte-output.ts), with no intermediate
 * strings and no copy of the finished message. The one value writer of the converter:
 * JsonWriter (schema JSON) uses it for defaults too. Its property tests compare it with
 * a plain string writer kept as the reference (test/unit/connect/converters/
 * reference-json-writer.ts), errors included: a value that cannot be written fails
 * with the same DataException at the same place.
 * Structs go through a function compiled per struct schema (json-struct-compiler.ts);
 * everything it does not handle itself comes back to value() here.
 */
import {
  DataException,
  describeValue,
  isStructValue,
  LogicalType,
  type Schema,
  unscaledFromBytes,
} from '../api/index.ts';
import { formatBigDecimal, formatDouble, formatFloat } from './java-number-format.ts';
import { JsonByteOutput } from './json-byte-output.ts';
import { structWriter } from './json-struct-compiler.ts';
import type { JsonWriterOptions } from './json-writer.ts';

const MS_PER_DAY = 86_400_000;
const INT_MIN = { int8: -0x80, int16: -0x8000, int32: -0x80000000 } as const;
const CLOSE_BRACE = 0x7d;

export class JsonByteWriter {
  readonly out = new JsonByteOutput();
  /** The frozen struct value written last by frozenStruct(), its schema and its bytes. */
  private memoValue: object | null = null;
  private memoSchema: Schema | null = null;
  private memoBytes: Buffer = Buffer.alloc(0);

  constructor(private readonly options: JsonWriterOptions) {}

  /**
   * A frozen struct value of flat fields (json-struct-compiler.ts decides which), the
   * same object as last time: its bytes again, copied. A snapshot's read events share
   * one frozen `source` block of 12 fields, written once instead of once per row. The
   * bytes depend on the schema, the value and this writer's options only, and neither
   * a frozen object's fields nor their primitive values can change.
   */
  frozenStruct(write: (w: JsonByteWriter, value: unknown) => void, schema: Schema, value: object) {
    const out = this.out;
    if (value === this.memoValue && schema === this.memoSchema) {
      out.raw(this.memoBytes);
      return;
    }
    // Offsets from the message's start: a slab that runs full moves the message.
    const from = out.pos - out.start;
    write(this, value);
    this.memoBytes = Buffer.from(out.buf.subarray(out.start + from, out.pos));
    this.memoValue = value;
    this.memoSchema = schema;
  }

  /**
   * The value's JSON as a Buffer (a view into a shared slab). With a head (an
   * envelope's `{"schema":...,"payload":`), the head, the value, and the envelope's
   * closing brace.
   */
  toBuffer(schema: Schema | null, value: unknown, head: Buffer | null): Buffer {
    const out = this.out;
    // Only a getter or proxy inside the value could call back in here mid-message.
    if (out.busy) return new JsonByteWriter(this.options).toBuffer(schema, value, head);
    out.begin();
    try {
      if (head !== null) out.raw(head);
      this.value(schema, value);
      if (head !== null) out.byte(CLOSE_BRACE);
    } catch (e) {
      out.abandon();
      throw e;
    }
    return out.finish();
  }

  /** Write a value; a null schema means schemaless (types inferred from values). */
  value(schema: Schema | null | undefined, value: unknown): void {
    const out = this.out;
    if (value === null || value === undefined) {
      if (
        schema &&
        this.options.replaceNullWithDefault &&
        schema.defaultValue !== undefined &&
        schema.defaultValue !== null
      ) {
        this.value(schema, schema.defaultValue);
      } else if (!schema || schema.optional) {
        out.null();
      } else {
        throw new DataException(
          'Conversion error: null value for field that is required and has no default value',
        );
      }
    } else if (!schema) {
      this.schemaless(value);
    } else if (schema.name === undefined || !this.logical(schema, value)) {
      this.physical(schema, value);
    }
  }

  /** A non-null value by its schema's type (the logical types have had their turn). */
  private physical(schema: Schema, value: unknown): void {
    const out = this.out;
    switch (schema.type) {
      case 'int8':
      case 'int16':
      case 'int32': {
        const min = INT_MIN[schema.type];
        if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value >= -min) {
          this.invalid(schema, value);
        }
        out.integer(value);
        break;
      }
      case 'int64':
        if (typeof value === 'number' && Number.isInteger(value)) {
          if (Number.isSafeInteger(value)) out.integer(value);
          else out.ascii(BigInt(value).toString());
        } else if (typeof value === 'bigint') {
          out.ascii(value.toString());
        } else {
          this.invalid(schema, value);
        }
        break;
      case 'float32':
        if (typeof value !== 'number') this.invalid(schema, value);
        out.ascii(formatFloat(value));
        break;
      case 'float64':
        if (typeof value !== 'number') this.invalid(schema, value);
        out.ascii(formatDouble(value));
        break;
      case 'boolean':
        if (typeof value !== 'boolean') this.invalid(schema, value);
        out.boolean(value);
        break;
      case 'string':
        if (typeof value !== 'string') this.invalid(schema, value);
        out.string(value);
        break;
      case 'bytes':
        if (!(value instanceof Uint8Array)) this.invalid(schema, value);
        out.base64(value);
        break;
      case 'array': {
        if (!Array.isArray(value)) this.invalid(schema, value);
        const items = schema.valueSchema!;
        out.byte(0x5b);
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.byte(0x2c);
          this.value(items, value[i]);
        }
        out.byte(0x5d);
        break;
      }
      case 'map':
        this.map(schema, value);
        break;
      case 'struct':
        structWriter(schema)(this, value);
        break;
    }
  }

  /** Whether the value was written as a logical type. */
  private logical(schema: Schema, value: unknown): boolean {
    const out = this.out;
    switch (schema.name) {
      case LogicalType.Decimal: {
        if (!(value instanceof Uint8Array)) {
          throw new DataException(
            `Invalid type for Decimal: expected the unscaled bytes, got ${describeValue(value)}`,
          );
        }
        if (this.options.decimalFormat === 'BASE64') out.base64(value);
        else {
          out.ascii(
            formatBigDecimal(unscaledFromBytes(value), Number(schema.parameters?.scale ?? 0)),
          );
        }
        return true;
      }
      case LogicalType.Date:
        if (!(value instanceof Date)) return false;
        out.number(Math.floor(value.getTime() / MS_PER_DAY));
        return true;
      case LogicalType.Time:
        if (!(value instanceof Date)) return false;
        out.number(((value.getTime() % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY);
        return true;
      case LogicalType.Timestamp:
        if (!(value instanceof Date)) return false;
        out.number(value.getTime());
        return true;
      default:
        return false;
    }
  }

  private map(schema: Schema, value: unknown): void {
    const entries =
      value instanceof Map
        ? value.entries()
        : isStructValue(value)
          ? Object.entries(value).values()
          : null;
    if (entries === null) this.invalid(schema, value);
    const out = this.out;
    const objectMode = schema.keySchema!.type === 'string';
    out.byte(objectMode ? 0x7b : 0x5b);
    let first = true;
    for (const [k, v] of entries) {
      if (!first) out.byte(0x2c);
      first = false;
      if (objectMode) {
        this.value(schema.keySchema, k);
        out.byte(0x3a);
        this.value(schema.valueSchema, v);
      } else {
        out.byte(0x5b);
        this.value(schema.keySchema, k);
        out.byte(0x2c);
        this.value(schema.valueSchema, v);
        out.byte(0x5d);
      }
    }
    out.byte(objectMode ? CLOSE_BRACE : 0x5d);
  }

  private schemaless(value: unknown): void {
    const out = this.out;
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) out.integer(value);
      else out.ascii(formatDouble(value));
    } else if (typeof value === 'bigint') {
      out.ascii(value.toString());
    } else if (typeof value === 'boolean') {
      out.boolean(value);
    } else if (typeof value === 'string') {
      out.string(value);
    } else if (value instanceof Uint8Array) {
      out.base64(value);
    } else if (Array.isArray(value)) {
      out.byte(0x5b);
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out.byte(0x2c);
        this.value(null, value[i]);
      }
      out.byte(0x5d);
    } else if (value instanceof Map) {
      this.schemalessMap(value);
    } else if (isStructValue(value) && !(value instanceof Date)) {
      out.byte(0x7b);
      let first = true;
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        if (!first) out.byte(0x2c);
        first = false;
        out.string(k);
        out.byte(0x3a);
        this.value(null, value[k]);
      }
      out.byte(CLOSE_BRACE);
    } else {
      throw new DataException(`${describeValue(value)} does not have a corresponding schema type`);
    }
  }

  /** A Map without schema: an object when every key is a string, else [[key, value], ...]. */
  private schemalessMap(value: Map<unknown, unknown>): void {
    const out = this.out;
    let objectMode = true;
    for (const k of value.keys()) {
      if (typeof k !== 'string') {
        objectMode = false;
        break;
      }
    }
    out.byte(objectMode ? 0x7b : 0x5b);
    let first = true;
    for (const [k, v] of value) {
      if (!first) out.byte(0x2c);
      first = false;
      if (objectMode) {
        out.string(k as string);
        out.byte(0x3a);
        this.value(null, v);
      } else {
        out.byte(0x5b);
        this.value(null, k);
        out.byte(0x2c);
        this.value(null, v);
        out.byte(0x5d);
      }
    }
    out.byte(objectMode ? CLOSE_BRACE : 0x5d);
  }

  invalid(schema: Schema, value: unknown): never {
    throw new DataException(
      `Invalid type for ${schema.type}${schema.name ? ` (${schema.name})` : ''}: ${describeValue(value)}`,
    );
  }
}
