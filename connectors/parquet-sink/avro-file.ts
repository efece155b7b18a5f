/**
 * AvroFormat: Avro object container files (`.avro`) of the group's Connect schema,
 * converted as Confluent's AvroData converts it (connect.meta.data on, its default),
 * for the types this sink writes:
 *
 *   struct     record named after the schema (`a.b.C`: namespace a.b, name C), unnamed
 *              ones io.confluent.connect.avro.ConnectDefault, ConnectDefault2, ...
 *   optional   union ["null", T] with default null
 *   int8/int16 int with "connect.type": "int8" / "int16"      int32  int
 *   int64      long, every value exact: written through a custom avsc long over
 *              BigInt (EXACT_LONG), as avsc's own long stops at 2^53
 *   float32/float64  float/double    boolean, string, bytes
 *   Decimal    bytes, logicalType decimal, precision from connect.decimal.precision
 *              (AvroData's default 64), scale; connect.parameters kept
 *   Date, Time, Timestamp   int date, int time-millis, long timestamp-millis
 *   array      array         map with string keys: map
 *   map with other keys     array of io.confluent.connect.avro.MapEntry { key, value }
 * Named schemas (Debezium's io.debezium.time.MicroTimestamp, ...) carry "connect.name"
 * and "connect.version" as AvroData writes them; docs go to "doc". Values keep their
 * physical encoding (schema.ts), as Avro's logical types do.
 *
 * Refused by name (a SchemaMappingError when the schema is adopted, a record error for
 * a value): a name Avro cannot hold (only [A-Za-z_][A-Za-z0-9_]* per part), an int64
 * value outside the int64 range, an int64 default beyond 2^53 (the schema's JSON text
 * is written with JavaScript numbers), and a default of a bytes, struct, array or map
 * schema. Defaults of numbers, booleans and strings become the field's Avro default
 * (an optional field's union then lists its type before null, as Avro requires and
 * AvroData does).
 *
 * Container layout (Avro 1.x spec): "Obj\x01", the metadata map (avro.schema,
 * avro.codec), a 16-byte sync marker, then blocks of about 64 KiB of records: record
 * count, byte length, the records (compressed by avro.codec: null, deflate = raw
 * DEFLATE, snappy = snappy + big-endian CRC-32 of the uncompressed block), the sync
 * marker again. The sync marker is the MD5 of the schema text, not random, so the same
 * records give the same bytes and a replay rewrites an identical object.
 */
import { createHash } from 'node:crypto';
import { crc32, deflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { compressSync as snappyCompress } from 'snappy';
import { LogicalType, type Schema } from '../../src/connect/api/index.ts';
import type { AvroCodec } from './file-format.ts';
import { SchemaMappingError } from './schema-mapping.ts';

/** Java's DataFileWriter default sync interval: blocks of about this many bytes. */
const BLOCK_BYTES = 64 * 1024;
const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]);
const DEFAULT_NAMESPACE = 'io.confluent.connect.avro';
/** AvroData's CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT. */
const DEFAULT_DECIMAL_PRECISION = 64;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type AvroSchema = Record<string, unknown> | string | AvroSchema[];
type Convert = (v: unknown, at: string) => unknown;

export class AvroFileWriter {
  private readonly type: avro.Type;
  private readonly convert: Convert;
  private readonly schemaText: string;

  constructor(
    schema: Schema,
    private readonly codec: AvroCodec,
  ) {
    const mapped = new AvroMapping().map(schema, '');
    this.schemaText = JSON.stringify(mapped.avro);
    try {
      this.type = avro.Type.forSchema(mapped.avro as avro.Schema, {
        wrapUnions: 'never',
        // Every long, plain or annotated ({"type": "long", ...}): the registry alone
        // would only catch the plain name.
        typeHook: (s) =>
          s === 'long' || (s as { type?: unknown }).type === 'long' ? EXACT_LONG : undefined,
      });
    } catch (e) {
      throw new SchemaMappingError(`no Avro schema for it: ${(e as Error).message}`);
    }
    this.convert = mapped.convert;
  }

  /** Check that a value converts (throws naming the field); returns its encoded size. */
  check(value: unknown): number {
    return this.type.toBuffer(this.convert(value, '')).byteLength;
  }

  encode(values: readonly unknown[]): Uint8Array {
    const sync = createHash('md5').update(this.schemaText).digest();
    const header = HEADER_TYPE.toBuffer({
      magic: MAGIC,
      meta: { 'avro.schema': Buffer.from(this.schemaText), 'avro.codec': Buffer.from(this.codec) },
      sync,
    });
    const out: Buffer[] = [header];
    let block: Buffer[] = [];
    let blockBytes = 0;
    const flush = () => {
      if (block.length === 0) return;
      const data = this.compress(Buffer.concat(block));
      out.push(LONG.toBuffer(block.length), LONG.toBuffer(data.byteLength), data, sync);
      block = [];
      blockBytes = 0;
    };
    for (const v of values) {
      const bytes = this.type.toBuffer(this.convert(v, ''));
      block.push(bytes);
      blockBytes += bytes.byteLength;
      if (blockBytes >= BLOCK_BYTES) flush();
    }
    flush();
    return Buffer.concat(out);
  }

  private compress(block: Buffer): Buffer {
    switch (this.codec) {
      case 'null':
        return block;
      case 'deflate':
        return deflateRawSync(block);
      case 'snappy': {
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32(block) >>> 0);
        return Buffer.concat([snappyCompress(block), crc]);
      }
    }
  }
}

const LONG = avro.Type.forSchema('long');
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Avro's long as BigInt values (avsc's own long stops at 2^53): written as the 8 bytes
 * of the two's complement, little-endian, which avsc packs into the zigzag varint.
 * fromJSON takes the schema's field defaults (numbers); toJSON is for avsc's own
 * exports, which this file does not use.
 */
const EXACT_LONG = avro.types.LongType.__with({
  fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(n);
    return b;
  },
  fromJSON: (n: number | bigint) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint' && n >= INT64_MIN && n <= INT64_MAX,
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

/** The container header, as the spec declares it (org.apache.avro.file.Header). */
const HEADER_TYPE = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});

/** Connect schema -> Avro schema and value converter, naming unnamed records as AvroData. */
class AvroMapping {
  private unnamed = 0;
  private readonly names = new Set<string>();

  map(schema: Schema, at: string): { avro: AvroSchema; convert: Convert } {
    const inner = this.mapRequired(schema, at);
    if (!schema.optional) return inner;
    // Avro's default must match the union's first branch: null first, unless a default.
    const hasDefault = fieldDefault(schema, at) !== undefined;
    return {
      avro: hasDefault ? [inner.avro, 'null'] : ['null', inner.avro],
      convert: (v, path) => (v === null || v === undefined ? null : inner.convert(v, path)),
    };
  }

  private mapRequired(schema: Schema, at: string): { avro: AvroSchema; convert: Convert } {
    const meta = connectProps(schema);
    const required: Convert = (v, path) => {
      if (v === null || v === undefined)
        throw new Error(`${where(path)}is required but has no value`);
      return v;
    };
    switch (schema.type) {
      case 'int8':
      case 'int16':
        return {
          avro: { type: 'int', 'connect.type': schema.type, ...meta },
          convert: number(required),
        };
      case 'int32': {
        const logical =
          schema.name === LogicalType.Date
            ? { logicalType: 'date' }
            : schema.name === LogicalType.Time
              ? { logicalType: 'time-millis' }
              : {};
        return { avro: primitive('int', { ...logical, ...meta }), convert: number(required) };
      }
      case 'int64': {
        const logical =
          schema.name === LogicalType.Timestamp ? { logicalType: 'timestamp-millis' } : {};
        return { avro: primitive('long', { ...logical, ...meta }), convert: long(required) };
      }
      case 'float32':
        return { avro: primitive('float', meta), convert: required };
      case 'float64':
        return { avro: primitive('double', meta), convert: required };
      case 'boolean':
        return { avro: primitive('boolean', meta), convert: required };
      case 'string':
        return { avro: primitive('string', meta), convert: required };
      case 'bytes': {
        const bytes: Convert = (v, path) => {
          const b = required(v, path);
          if (!(b instanceof Uint8Array)) throw new Error(`${where(path)}must be bytes`);
          return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
        };
        if (schema.name !== LogicalType.Decimal)
          return { avro: primitive('bytes', meta), convert: bytes };
        const precision = Number(
          schema.parameters?.['connect.decimal.precision'] ?? DEFAULT_DECIMAL_PRECISION,
        );
        const scale = Number(schema.parameters?.scale ?? 0);
        return {
          avro: { type: 'bytes', scale, precision, ...meta, logicalType: 'decimal' },
          convert: bytes,
        };
      }
      case 'array': {
        const element = this.map(schema.valueSchema as Schema, `${at}[]`);
        return {
          avro: { type: 'array', items: element.avro, ...meta },
          convert: (v, path) => {
            const a = required(v, path);
            if (!Array.isArray(a)) throw new Error(`${where(path)}must be an array`);
            return a.map((x, i) => element.convert(x, `${path}[${i}]`));
          },
        };
      }
      case 'map': {
        const keySchema = schema.keySchema as Schema;
        const value = this.map(schema.valueSchema as Schema, `${at}.<value>`);
        if (keySchema.type === 'string' && !keySchema.optional) {
          return {
            avro: { type: 'map', values: value.avro, ...meta },
            convert: (v, path) => {
              const out: Record<string, unknown> = {};
              for (const [k, x] of entries(required(v, path), path)) {
                out[k as string] = value.convert(x, `${path}.${String(k)}`);
              }
              return out;
            },
          };
        }
        const key = this.map(keySchema, `${at}.<key>`);
        const entry = this.recordName(undefined, 'MapEntry', at);
        return {
          avro: {
            type: 'array',
            items: {
              type: 'record',
              name: entry,
              fields: [
                { name: 'key', type: key.avro, ...(keySchema.optional ? { default: null } : {}) },
                {
                  name: 'value',
                  type: value.avro,
                  ...((schema.valueSchema as Schema).optional ? { default: null } : {}),
                },
              ],
            },
            ...meta,
          },
          convert: (v, path) =>
            entries(required(v, path), path).map(([k, x]) => ({
              key: key.convert(k, `${path}.<key>`),
              value: value.convert(x, `${path}.${String(k)}`),
            })),
        };
      }
      case 'struct': {
        const fields = (schema.fields ?? []).map((f) => {
          if (!NAME.test(f.name)) {
            throw new SchemaMappingError(`field '${join(at, f.name)}' has a name Avro cannot hold`);
          }
          return { name: f.name, schema: f.schema, mapped: this.map(f.schema, join(at, f.name)) };
        });
        const { 'connect.name': _name, ...rest } = meta;
        return {
          avro: {
            type: 'record',
            name: this.recordName(schema.name, 'ConnectDefault', at),
            ...(schema.doc !== undefined ? { doc: schema.doc } : {}),
            fields: fields.map((f) => {
              const d = fieldDefault(f.schema, join(at, f.name));
              return {
                name: f.name,
                type: f.mapped.avro,
                ...(d !== undefined ? { default: d } : f.schema.optional ? { default: null } : {}),
              };
            }),
            ...rest,
            ...(schema.name !== undefined ? { 'connect.name': schema.name } : {}),
          },
          convert: (v, path) => {
            const obj = required(v, path);
            if (typeof obj !== 'object' || Array.isArray(obj) || obj instanceof Uint8Array) {
              throw new Error(`${where(path)}must be a struct`);
            }
            const out: Record<string, unknown> = {};
            for (const f of fields) {
              out[f.name] = f.mapped.convert(
                (obj as Record<string, unknown>)[f.name],
                join(path, f.name),
              );
            }
            return out;
          },
        };
      }
    }
  }

  /** A record's full name: its schema's, or AvroData's default names, each used once. */
  private recordName(connectName: string | undefined, fallback: string, at: string): string {
    let name: string;
    if (connectName !== undefined) {
      if (!connectName.split('.').every((part) => NAME.test(part))) {
        throw new SchemaMappingError(
          `${where(at)}has schema name '${connectName}', which is not an Avro name`,
        );
      }
      name = connectName;
    } else {
      this.unnamed++;
      name = `${DEFAULT_NAMESPACE}.${fallback}${this.unnamed === 1 && fallback === 'ConnectDefault' ? '' : this.unnamed}`;
    }
    if (this.names.has(name)) {
      throw new SchemaMappingError(
        `${where(at)}reuses the record name '${name}' for another schema`,
      );
    }
    this.names.add(name);
    return name;
  }
}

/**
 * A field's Avro default from its Connect default, as AvroData writes it: numbers,
 * booleans and strings; other defaults are refused by name rather than dropped.
 */
function fieldDefault(schema: Schema, at: string): unknown {
  const d = schema.defaultValue;
  if (d === undefined || d === null) return undefined;
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
    case 'float32':
    case 'float64':
    case 'boolean':
    case 'string':
      return d;
    case 'int64':
      if (
        typeof d === 'bigint' &&
        (d > BigInt(Number.MAX_SAFE_INTEGER) || d < BigInt(Number.MIN_SAFE_INTEGER))
      ) {
        throw new SchemaMappingError(
          `${where(at)}has a default beyond 2^53, which AvroFormat cannot write`,
        );
      }
      return Number(d);
    default:
      throw new SchemaMappingError(
        `${where(at)}has a default value of type ${schema.type}; AvroFormat writes defaults of numbers, booleans and strings only`,
      );
  }
}

function primitive(type: string, props: Record<string, unknown>): AvroSchema {
  return Object.keys(props).length === 0 ? type : { type, ...props };
}

/** AvroData's connect.* properties of a named, versioned or parameterized schema. */
function connectProps(schema: Schema): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  if (schema.name !== undefined) props['connect.name'] = schema.name;
  if (schema.version !== undefined) props['connect.version'] = schema.version;
  if (schema.doc !== undefined && schema.type !== 'struct') props['connect.doc'] = schema.doc;
  if (schema.parameters !== undefined) props['connect.parameters'] = { ...schema.parameters };
  return props;
}

function number(required: Convert): Convert {
  return (v, path) => {
    const n = required(v, path);
    if (typeof n !== 'number' || !Number.isInteger(n))
      throw new Error(`${where(path)}must be an integer`);
    return n;
  };
}

/** An int64 value (a number or a BigInt) as the BigInt EXACT_LONG writes. */
function long(required: Convert): Convert {
  return (v, path) => {
    const n = required(v, path);
    if (typeof n !== 'bigint' && !(typeof n === 'number' && Number.isInteger(n)))
      throw new Error(`${where(path)}must be an integer`);
    const exact = BigInt(n);
    if (exact < INT64_MIN || exact > INT64_MAX) {
      throw new Error(`${where(path)}is ${exact}, outside the int64 range`);
    }
    return exact;
  };
}

function entries(v: unknown, path: string): Array<[unknown, unknown]> {
  if (v instanceof Map) return [...v.entries()];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return Object.entries(v);
  throw new Error(`${where(path)}must be a map`);
}

function join(at: string, name: string): string {
  return at === '' ? name : `${at}.${name}`;
}

function where(at: string): string {
  return at === '' ? 'the value ' : `field '${at}' `;
}
