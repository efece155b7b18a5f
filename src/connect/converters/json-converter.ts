/**
 * JsonConverter, compatible with Kafka Connect's org.apache.kafka.connect.json.JsonConverter:
 * the same keys (`schemas.enable`, `schemas.cache.size`, `decimal.format`,
 * `replace.null.with.default`) and the same bytes. With schemas enabled a message is
 * the envelope `{"schema":<Kafka schema JSON>,"payload":<value>}`; without, the bare
 * value. Tombstones: null schema and null value give null bytes, and null bytes give
 * `{ schema: null, value: null }`.
 */
import {
  type AnyConfigDef,
  atLeast,
  type Converter,
  DataException,
  define,
  isStructValue,
  LogicalType,
  oneOf,
  parseConfigOrThrow,
  type Schema,
  type SchemaAndValue,
} from '../api/index.ts';
import { releaseJsonBytes } from './json-byte-output.ts';
import { endOfObjectBytes, parseJson } from './json-reader.ts';
import { JsonToConnect } from './json-to-connect.ts';
import { type DecimalFormat, JsonWriter } from './json-writer.ts';
import { SchemalessShapes } from './schemaless-shapes.ts';

export const jsonConverterConfigDefs: AnyConfigDef[] = [
  define<boolean>({
    name: 'schemas.enable',
    type: 'boolean',
    default: true,
    importance: 'high',
    doc: 'Include schemas within each of the serialized values and keys.',
  }),
  define<number>({
    name: 'schemas.cache.size',
    type: 'int',
    default: 1000,
    validator: atLeast(1),
    importance: 'high',
    doc: 'The maximum number of schemas that can be cached in this converter instance.',
  }),
  define<string>({
    name: 'decimal.format',
    type: 'string',
    default: 'BASE64',
    validator: (v) => oneOf('BASE64', 'NUMERIC')(v.toUpperCase(), 'decimal.format'),
    importance: 'low',
    doc: 'Serialize Decimal values as base64 bytes (BASE64) or as JSON numbers (NUMERIC).',
  }),
  define<boolean>({
    name: 'replace.null.with.default',
    type: 'boolean',
    default: true,
    importance: 'low',
    doc: 'Write (and read) a null field that has a schema default as that default.',
  }),
];

const ENVELOPE_START = '{"schema":';
const PAYLOAD_KEY = ',"payload":';

const NULL_SCHEMA_HEAD = Buffer.from(`${ENVELOPE_START}null${PAYLOAD_KEY}`, 'utf8');
const ENVELOPE_HEAD = Buffer.from(ENVELOPE_START, 'utf8');
const PAYLOAD_HEAD = Buffer.from(PAYLOAD_KEY, 'utf8');

const ENVELOPE_ERROR =
  'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain ' +
  'additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false ' +
  'in your converter configuration.';

export class JsonConverter implements Converter {
  private schemasEnabled = true;
  private writer = new JsonWriter({ decimalFormat: 'BASE64', replaceNullWithDefault: true });
  private reader = new JsonToConnect(1000, true);
  /** The schema of the last envelope read, by its exact bytes (see compactEnvelope). */
  private lastEnvelopeSchema: { bytes: Buffer; schema: Schema | null } | undefined;
  private heads = new WeakMap<Schema, Buffer>();
  /** Schemaless messages of a repeating flat shape, read from their bytes. */
  private shapes = new SchemalessShapes();

  configure(config: Readonly<Record<string, unknown>>, _isKey: boolean): void {
    const { values } = parseConfigOrThrow(jsonConverterConfigDefs, config);
    this.schemasEnabled = values['schemas.enable'] as boolean;
    const replaceNullWithDefault = values['replace.null.with.default'] as boolean;
    this.writer = new JsonWriter({
      decimalFormat: (values['decimal.format'] as string).toUpperCase() as DecimalFormat,
      replaceNullWithDefault,
    });
    this.reader = new JsonToConnect(values['schemas.cache.size'] as number, replaceNullWithDefault);
    this.lastEnvelopeSchema = undefined;
    this.heads = new WeakMap();
    this.shapes = new SchemalessShapes();
  }

  fromConnectData(_topic: string, schema: Schema | null, value: unknown): Buffer | null {
    if (!schema && (value === null || value === undefined)) return null;
    if (!this.schemasEnabled) return this.writer.toBuffer(schema, value, null);
    // The envelope's head (`{"schema":...,"payload":`) is encoded once per schema; each
    // message is the head, its payload and `}`, written straight into a shared slab.
    const head = schema ? this.envelopeHead(schema) : NULL_SCHEMA_HEAD;
    return this.writer.toBuffer(schema, value, head);
  }

  /** Its messages are views of shared slabs (json-byte-output.ts): a slab is reused once all are back. */
  release(bytes: Buffer): void {
    releaseJsonBytes(bytes);
  }

  private envelopeHead(schema: Schema): Buffer {
    let head = this.heads.get(schema);
    if (head === undefined) {
      head = Buffer.from(
        `${ENVELOPE_START}${this.writer.schemaJson(schema)}${PAYLOAD_KEY}`,
        'utf8',
      );
      this.heads.set(schema, head);
    }
    return head;
  }

  toConnectData(_topic: string, bytes: Uint8Array | null): SchemaAndValue {
    if (bytes === null) return { schema: null, value: null };
    const buf = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.schemasEnabled) {
      const fast = this.compactEnvelope(buf);
      if (fast !== null) return fast;
    } else {
      const fast = this.shapes.read(buf);
      if (fast !== undefined) return { schema: null, value: fast };
    }
    const { value: json, exact } = parseJson(buf.toString('utf8'));
    if (!this.schemasEnabled) {
      if (!exact) this.shapes.learn(json);
      return { schema: null, value: exact ? this.reader.value(null, json) : json };
    }
    if (
      !isStructValue(json) ||
      !Object.hasOwn(json, 'schema') ||
      !Object.hasOwn(json, 'payload') ||
      Object.keys(json).length !== 2
    ) {
      throw new DataException(ENVELOPE_ERROR);
    }
    const schema = this.reader.schema(json.schema);
    if (schema === null && !exact) return { schema: null, value: json.payload };
    return { schema, value: this.reader.value(schema, json.payload) };
  }

  /**
   * The envelope as Kafka and this converter write it (`{"schema":...,"payload":...}`,
   * compact): the schema is found and compared as bytes, never decoded or parsed
   * when it is the previous record's, and only the payload becomes text. Null when
   * the bytes have another layout (spaces, other key order), which the general path
   * then handles.
   */
  private compactEnvelope(buf: Buffer): SchemaAndValue | null {
    const close = buf.length - 1;
    if (close < ENVELOPE_HEAD.length || buf[close] !== 0x7d || !hasAt(buf, ENVELOPE_HEAD, 0)) {
      return null;
    }
    const start = ENVELOPE_HEAD.length;
    let schema: Schema | null;
    let schemaEnd: number;
    const last = this.lastEnvelopeSchema;
    // Records of one topic mostly share one schema (~600 of a CDC record's ~700
    // bytes): comparing its bytes with the last one's (one native memcmp) spares
    // decoding, scanning and hashing it per record. A complete JSON object followed
    // by the payload key is exactly the schema, so a prefix match is an exact match.
    if (
      last !== undefined &&
      start + last.bytes.length + PAYLOAD_HEAD.length <= close &&
      buf.compare(last.bytes, 0, last.bytes.length, start, start + last.bytes.length) === 0 &&
      hasAt(buf, PAYLOAD_HEAD, start + last.bytes.length)
    ) {
      schema = last.schema;
      schemaEnd = start + last.bytes.length;
    } else {
      schemaEnd = endOfObjectBytes(buf, start, close);
      if (schemaEnd < 0 || !hasAt(buf, PAYLOAD_HEAD, schemaEnd)) return null;
      schema = this.reader.schemaFromText(buf.toString('utf8', start, schemaEnd));
      // A copy: a slice would keep the whole fetched batch the record came in alive.
      this.lastEnvelopeSchema = { bytes: Buffer.from(buf.subarray(start, schemaEnd)), schema };
    }
    const payloadStart = schemaEnd + PAYLOAD_HEAD.length;
    if (schema !== null) {
      const value = this.reader.compactStruct(schema, buf, payloadStart, close);
      if (value !== undefined) return { schema, value };
    }
    const { value: payload, exact } = parseJson(
      buf.toString('utf8', payloadStart, close),
      schema !== null && !hasDecimal(schema),
    );
    if (schema === null && !exact) return { schema: null, value: payload };
    return { schema, value: this.reader.value(schema, payload) };
  }

  /** Kafka's schema JSON for a schema, e.g. for error reports and tooling. */
  schemaJson(schema: Schema): string {
    return this.writer.schemaJson(schema);
  }
}

/** Whether `buf` holds `part` at `at` (a short constant: a loop beats a native call). */
function hasAt(buf: Buffer, part: Buffer, at: number): boolean {
  if (at + part.length > buf.length) return false;
  for (let i = 0; i < part.length; i++) if (buf[at + i] !== part[i]) return false;
  return true;
}

const decimalCache = new WeakMap<Schema, boolean>();

/** Whether a schema holds a Decimal anywhere (the only type that needs exact non-integers). */
function hasDecimal(schema: Schema): boolean {
  let known = decimalCache.get(schema);
  if (known === undefined) {
    known =
      schema.name === LogicalType.Decimal ||
      (schema.fields?.some((f) => hasDecimal(f.schema)) ?? false) ||
      (schema.keySchema !== undefined && hasDecimal(schema.keySchema)) ||
      (schema.valueSchema !== undefined && hasDecimal(schema.valueSchema));
    decimalCache.set(schema, known);
  }
  return known;
}
