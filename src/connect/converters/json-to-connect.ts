/**
 * Parsed JSON (from json-reader.ts) to Connect schemas and values, following Kafka's
 * JsonConverter: a schema object in Kafka's layout becomes a Schema (cached by its
 * text, up to `schemas.cache.size` entries); a payload is converted against it.
 * Values come out in schema.ts's conventions: typed maps as Map, structs and
 * schemaless objects as plain objects, int64 as number or (beyond 2^53) bigint,
 * Decimal as unscaled bytes, bytes as Buffer.
 */
import {
  DataException,
  decimalFromString,
  decimalScale,
  describeValue,
  isStructValue,
  LogicalType,
  type Schema,
  type SchemaType,
  unscaledToBytes,
} from '../api/index.ts';
import { CompactStructReader } from './compact-struct-reader.ts';
import { JsonDecimal, parseJson } from './json-reader.ts';

const TYPE_FROM_JSON: Record<string, SchemaType> = {
  boolean: 'boolean',
  int8: 'int8',
  int16: 'int16',
  int32: 'int32',
  int64: 'int64',
  float: 'float32',
  double: 'float64',
  bytes: 'bytes',
  string: 'string',
  array: 'array',
  map: 'map',
  struct: 'struct',
};

const INT_LIMIT = { int8: 0x80, int16: 0x8000, int32: 0x80000000 } as const;

type ValueReader = (node: unknown) => unknown;

/** Read once: the api module's exports are accessors under some loaders. */
const DECIMAL: string = LogicalType.Decimal;

export class JsonToConnect {
  private readonly schemaCache = new Map<string, Schema>();
  private readonly readers = new WeakMap<Schema, ValueReader>();
  private readonly compactReaders = new WeakMap<Schema, CompactStructReader | null>();

  constructor(
    private readonly cacheSize: number,
    private readonly replaceNullWithDefault: boolean,
  ) {}

  /**
   * A Schema from the text of Kafka's schema JSON, cached by that text, so a stream of
   * messages with one schema parses it once.
   */
  schemaFromText(text: string): Schema | null {
    if (text === 'null') return null;
    const cached = this.schemaCache.get(text);
    if (cached !== undefined) return cached;
    return this.remember(text, this.buildSchema(parseJson(text).value));
  }

  /** A Schema from Kafka's schema JSON; null for a JSON null (schemaless). */
  schema(node: unknown): Schema | null {
    if (node === null || node === undefined) return null;
    const key = JSON.stringify(node, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    const cached = this.schemaCache.get(key);
    if (cached !== undefined) return cached;
    return this.remember(key, this.buildSchema(node));
  }

  private remember(key: string, schema: Schema): Schema {
    if (this.schemaCache.size >= this.cacheSize) {
      // Evict the oldest entry: Map iterates in insertion order.
      this.schemaCache.delete(this.schemaCache.keys().next().value!);
    }
    this.schemaCache.set(key, schema);
    return schema;
  }

  private buildSchema(node: unknown): Schema {
    if (!isStructValue(node)) throw new DataException('Schema must be a JSON object');
    const typeName = node.type;
    if (typeof typeName !== 'string') throw new DataException("Schema must contain 'type' field");
    const type = TYPE_FROM_JSON[typeName];
    if (type === undefined) throw new DataException(`Unknown schema type: ${typeName}`);
    const schema: Schema = { type, optional: node.optional === true };
    switch (type) {
      case 'array':
        if (node.items === null || node.items === undefined) {
          throw new DataException('Array schema did not specify the element type');
        }
        schema.valueSchema = this.buildSchema(node.items);
        break;
      case 'map':
        if (node.keys === undefined)
          throw new DataException('Map schema did not specify the key type');
        if (node.values === undefined) {
          throw new DataException('Map schema did not specify the value type');
        }
        schema.keySchema = this.buildSchema(node.keys);
        schema.valueSchema = this.buildSchema(node.values);
        break;
      case 'struct': {
        if (!Array.isArray(node.fields)) {
          throw new DataException('Struct schema\'s "fields" argument is not an array.');
        }
        schema.fields = node.fields.map((f: unknown, index: number) => {
          const name = isStructValue(f) ? f.field : undefined;
          if (typeof name !== 'string') {
            throw new DataException("Struct schema's field name not specified properly");
          }
          return { name, index, schema: this.buildSchema(f) };
        });
        break;
      }
      default:
    }
    if (typeof node.name === 'string') schema.name = node.name;
    if (typeof node.version === 'number' && Number.isInteger(node.version)) {
      schema.version = node.version;
    }
    if (typeof node.doc === 'string') schema.doc = node.doc;
    if (isStructValue(node.parameters)) {
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(node.parameters)) {
        if (typeof v !== 'string')
          throw new DataException('Schema parameters must have string values.');
        params[k] = v;
      }
      schema.parameters = params;
    }
    if (node.default !== undefined && node.default !== null) {
      schema.defaultValue = this.value(schema, node.default);
    }
    return schema;
  }

  /**
   * The payload in bytes[start, end) read straight from the bytes when the schema is
   * a flat struct written compactly (compact-struct-reader.ts); undefined when the
   * caller must parse it and call value().
   */
  compactStruct(schema: Schema, bytes: Buffer, start: number, end: number): unknown {
    let reader = this.compactReaders.get(schema);
    if (reader === undefined) {
      reader = CompactStructReader.of(schema);
      this.compactReaders.set(schema, reader);
    }
    return reader?.read(bytes, start, end);
  }

  /** A payload converted against a schema (or, with a null schema, as inferred). */
  value(schema: Schema | null, node: unknown): unknown {
    return schema === null ? schemaless(node) : this.readerFor(schema)(node);
  }

  /**
   * The reader of one schema's values, built once per schema: a CDC sink reads
   * millions of records of one schema, so the type dispatch (and each struct's field
   * list) is resolved here rather than per value.
   */
  private readerFor(schema: Schema): ValueReader {
    let reader = this.readers.get(schema);
    if (reader === undefined) {
      reader = this.buildReader(schema);
      this.readers.set(schema, reader);
    }
    return reader;
  }

  private buildReader(schema: Schema): ValueReader {
    const read = this.nonNullReader(schema);
    const replaceNull = this.replaceNullWithDefault;
    return (node) => {
      if (node !== null && node !== undefined) return read(node);
      // Read at call time: buildSchema reads the default through this reader before
      // it sets schema.defaultValue.
      if (replaceNull && schema.defaultValue !== undefined && schema.defaultValue !== null) {
        return schema.defaultValue;
      }
      if (schema.optional) return null;
      throw new DataException(`Invalid null value for required ${schema.type} field`);
    };
  }

  private nonNullReader(schema: Schema): ValueReader {
    if (schema.name === DECIMAL) return (node) => decimal(schema, node);
    switch (schema.type) {
      case 'int8':
      case 'int16':
      case 'int32': {
        const limit = INT_LIMIT[schema.type];
        return (node) => {
          const n = typeof node === 'number' ? node : toNumber(schema, node);
          if (!Number.isInteger(n) || n < -limit || n >= limit) return invalid(schema, node);
          return n;
        };
      }
      case 'int64':
        return (node) =>
          typeof node === 'bigint' || (typeof node === 'number' && Number.isInteger(node))
            ? node
            : invalid(schema, node);
      case 'float32':
        return (node) => Math.fround(typeof node === 'number' ? node : toNumber(schema, node));
      case 'float64':
        return (node) => (typeof node === 'number' ? node : toNumber(schema, node));
      case 'boolean':
        return (node) => (typeof node === 'boolean' ? node : invalid(schema, node));
      case 'string':
        return (node) => (typeof node === 'string' ? node : invalid(schema, node));
      case 'bytes':
        return (node) =>
          typeof node === 'string' ? Buffer.from(node, 'base64') : invalid(schema, node);
      case 'array': {
        const read = this.readerFor(schema.valueSchema as Schema);
        return (node) => (Array.isArray(node) ? node.map((x) => read(x)) : invalid(schema, node));
      }
      case 'map':
        return (node) => this.map(schema, node);
      case 'struct': {
        const fields = (schema.fields ?? []).map((f) => ({
          name: f.name,
          read: this.readerFor(f.schema),
        }));
        return (node) => {
          if (!isStructValue(node)) {
            throw new DataException(
              `Structs should be encoded as JSON objects, but found ${describeValue(node)}`,
            );
          }
          const out: Record<string, unknown> = {};
          for (const f of fields) out[f.name] = f.read(node[f.name]);
          return out;
        };
      }
    }
  }

  private map(schema: Schema, node: unknown): Map<unknown, unknown> {
    const out = new Map<unknown, unknown>();
    const readValue = this.readerFor(schema.valueSchema as Schema);
    if (schema.keySchema!.type === 'string') {
      if (!isStructValue(node)) {
        throw new DataException(
          `Maps with string fields should be encoded as JSON objects, but found ${describeValue(node)}`,
        );
      }
      for (const [k, v] of Object.entries(node)) out.set(k, readValue(v));
      return out;
    }
    if (!Array.isArray(node)) {
      throw new DataException(
        `Maps with non-string fields should be encoded as JSON array of tuples, but found ${describeValue(node)}`,
      );
    }
    const readKey = this.readerFor(schema.keySchema as Schema);
    for (const entry of node) {
      if (!Array.isArray(entry) || entry.length !== 2) {
        throw new DataException(
          `Found invalid map entry instead of a [key, value] pair: ${describeValue(entry)}`,
        );
      }
      out.set(readKey(entry[0]), readValue(entry[1]));
    }
    return out;
  }
}

/** Schemaless payloads keep JSON's shape; only exact-number wrappers are unwrapped. */
function schemaless(node: unknown): unknown {
  if (node instanceof JsonDecimal) return node.toNumber();
  if (Array.isArray(node)) return node.map(schemaless);
  if (isStructValue(node)) {
    for (const k of Object.keys(node)) node[k] = schemaless(node[k]);
  }
  return node === undefined ? null : node;
}

function toNumber(schema: Schema, node: unknown): number {
  if (typeof node === 'number') return node;
  if (node instanceof JsonDecimal) return node.toNumber();
  if (typeof node === 'bigint') return Number(node);
  // Jackson writes non-finite doubles as quoted strings.
  if (node === 'NaN') return Number.NaN;
  if (node === 'Infinity') return Number.POSITIVE_INFINITY;
  if (node === '-Infinity') return Number.NEGATIVE_INFINITY;
  return invalid(schema, node);
}

function decimal(schema: Schema, node: unknown): Uint8Array {
  const scale = decimalScale(schema);
  if (typeof node === 'string') return Buffer.from(node, 'base64');
  const text =
    node instanceof JsonDecimal
      ? node.text
      : typeof node === 'number' || typeof node === 'bigint'
        ? String(node)
        : undefined;
  if (text === undefined) {
    throw new DataException(
      `Invalid type for Decimal, underlying representation should be numeric or bytes but was ${describeValue(node)}`,
    );
  }
  const unscaled = unscaledToBytes(decimalFromString(text, scale));
  return Buffer.from(unscaled.buffer, unscaled.byteOffset, unscaled.byteLength);
}

function invalid(schema: Schema, node: unknown): never {
  throw new DataException(`Invalid JSON for ${schema.name ?? schema.type}: ${describeValue(node)}`);
}
