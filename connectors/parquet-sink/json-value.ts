/**
 * A record value as one line of JsonFormat's files: what Kafka's JsonConverter writes
 * with schemas.enable=false (Confluent's JsonFormat configures it so), through Jackson:
 *
 *   struct            object, fields in schema order (properties not in the schema dropped)
 *   int8..int64       integers (int64 exact, bigint included)
 *   float32/float64   as Java's Float/Double.toString print them: 1.0, 0.001, 1.0E7, 1.0E-4;
 *                     NaN and infinities as the strings "NaN", "Infinity", "-Infinity"
 *                     (Jackson's QUOTE_NON_NUMERIC_NUMBERS, on by default)
 *   bytes             base64
 *   Decimal           json.decimal.format: BASE64 (the unscaled bytes in base64, the
 *                     default) or NUMERIC (a plain number with the schema's scale: 12.30)
 *   Date, Time, Timestamp  their physical numbers (days, ms of day, epoch ms), as
 *                     JsonConverter writes them
 *   array             array; map with string keys: object; other maps: [[key, value], ...]
 *   null              the schema's default if it has one, null if optional; a required
 *                     field without a value and default is refused, as JsonConverter refuses it
 * A schemaless value (no value schema) is written by its JavaScript type the same way
 * (numbers that are not integers as doubles, Uint8Array as base64, Map as an object when
 * every key is a string). Strings are escaped as Jackson escapes them: control
 * characters only, \u00XX in upper case; no other character is escaped, so a line
 * never contains a raw newline and one line is one record.
 *
 * A value that does not fit its schema throws a JsonValueError naming the field.
 */
import {
  decimalScale,
  decimalToString,
  LogicalType,
  type Schema,
  unscaledFromBytes,
} from '../../src/connect/api/index.ts';
import type { JsonDecimalFormat } from './file-format.ts';

export class JsonValueError extends Error {
  readonly kind = 'json-value';
}

/** One JSON text, without a line separator. */
export function jsonValue(
  schema: Schema | null | undefined,
  value: unknown,
  decimals: JsonDecimalFormat,
): string {
  return schema ? withSchema(schema, value, decimals, '') : schemaless(value);
}

function withSchema(
  schema: Schema,
  value: unknown,
  decimals: JsonDecimalFormat,
  at: string,
): string {
  if (value === null || value === undefined) {
    if (schema.defaultValue !== undefined && schema.defaultValue !== null) {
      return withSchema(schema, schema.defaultValue, decimals, at);
    }
    if (schema.optional) return 'null';
    throw new JsonValueError(`${where(at)}is required and has no value and no default`);
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(schema, value, at);
      return String(value);
    case 'int64':
      if (typeof value === 'bigint') return value.toString();
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(schema, value, at);
      return String(value);
    case 'float32':
      if (typeof value !== 'number') throw mismatch(schema, value, at);
      return javaFloat(value, true);
    case 'float64':
      if (typeof value !== 'number') throw mismatch(schema, value, at);
      return javaFloat(value, false);
    case 'boolean':
      if (typeof value !== 'boolean') throw mismatch(schema, value, at);
      return value ? 'true' : 'false';
    case 'string':
      if (typeof value !== 'string') throw mismatch(schema, value, at);
      return quote(value);
    case 'bytes': {
      if (!(value instanceof Uint8Array)) throw mismatch(schema, value, at);
      if (schema.name === LogicalType.Decimal && decimals === 'NUMERIC') {
        return decimalToString(unscaledFromBytes(value), decimalScale(schema));
      }
      return `"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"`;
    }
    case 'array': {
      if (!Array.isArray(value)) throw mismatch(schema, value, at);
      const element = schema.valueSchema as Schema;
      return `[${value.map((v, i) => withSchema(element, v, decimals, `${at}[${i}]`)).join(',')}]`;
    }
    case 'map': {
      const entries = mapEntries(value);
      if (entries === undefined) throw mismatch(schema, value, at);
      const keySchema = schema.keySchema as Schema;
      const valueSchema = schema.valueSchema as Schema;
      if (keySchema.type === 'string') {
        const members = entries.map(([k, v]) => {
          const name = withSchema(keySchema, k, decimals, `${at}.<key>`);
          return `${name}:${withSchema(valueSchema, v, decimals, `${at}.${String(k)}`)}`;
        });
        return `{${members.join(',')}}`;
      }
      const pairs = entries.map(
        ([k, v]) =>
          `[${withSchema(keySchema, k, decimals, `${at}.<key>`)},${withSchema(valueSchema, v, decimals, `${at}.${String(k)}`)}]`,
      );
      return `[${pairs.join(',')}]`;
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) {
        throw mismatch(schema, value, at);
      }
      const obj = value as Record<string, unknown>;
      // A loop and string concatenation: this is the per-record hot path of JSON files.
      const fields = schema.fields ?? [];
      let out = '{';
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i] as (typeof fields)[number];
        if (i > 0) out += ',';
        out += `${quoteName(f.name)}:${withSchema(f.schema, obj[f.name], decimals, at === '' ? f.name : `${at}.${f.name}`)}`;
      }
      return `${out}}`;
    }
  }
}

function schemaless(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number':
      return Number.isInteger(value) && Number.isSafeInteger(value)
        ? String(value)
        : javaFloat(value, false);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return quote(value);
    case 'object': {
      if (value instanceof Uint8Array) {
        return `"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"`;
      }
      if (Array.isArray(value)) return `[${value.map(schemaless).join(',')}]`;
      const entries = mapEntries(value) as Array<[unknown, unknown]>;
      if (entries.every(([k]) => typeof k === 'string')) {
        return `{${entries.map(([k, v]) => `${quote(k as string)}:${schemaless(v)}`).join(',')}}`;
      }
      return `[${entries.map(([k, v]) => `[${schemaless(k)},${schemaless(v)}]`).join(',')}]`;
    }
    default:
      throw new JsonValueError(`a ${typeof value} value has no JSON form`);
  }
}

function mapEntries(value: unknown): Array<[unknown, unknown]> | undefined {
  if (value instanceof Map) return [...value.entries()];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.entries(value);
  }
  return undefined;
}

function where(at: string): string {
  return at === '' ? 'the value ' : `field '${at}' `;
}

function mismatch(schema: Schema, value: unknown, at: string): JsonValueError {
  const got = value instanceof Uint8Array ? 'bytes' : Array.isArray(value) ? 'array' : typeof value;
  return new JsonValueError(
    `${where(at)}has schema ${schema.name ?? schema.type} but a ${got} value`,
  );
}

const quotedNames = new Map<string, string>();

/** Field names repeat on every record: quoted once. */
function quoteName(name: string): string {
  let q = quotedNames.get(name);
  if (q === undefined) {
    q = quote(name);
    if (quotedNames.size > 10_000) quotedNames.clear();
    quotedNames.set(name, q);
  }
  return q;
}

/** A JSON string literal as Jackson writes it (control characters as upper-case \u00XX). */
export function quote(s: string): string {
  const q = JSON.stringify(s);
  if (q.indexOf('\\u') < 0) return q;
  // JSON.stringify writes lower-case hex; only an odd run of backslashes starts an escape.
  return q.replace(/(\\+)u([0-9a-f]{4})/g, (m, slashes: string, hex: string) =>
    slashes.length % 2 === 1 ? `${slashes}u${hex.toUpperCase()}` : m,
  );
}

/**
 * Java's Double.toString (or Float.toString of the float32 value): the shortest digits
 * that read back as the same value, plain from 10^-3 up to 10^7 (with ".0" when
 * integral), otherwise computerized scientific notation with "E".
 */
export function javaFloat(v: number, float32: boolean): string {
  if (Number.isNaN(v)) return '"NaN"';
  if (v === Number.POSITIVE_INFINITY) return '"Infinity"';
  if (v === Number.NEGATIVE_INFINITY) return '"-Infinity"';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  let exp: string;
  if (float32) {
    const f = Math.fround(v);
    let p = 1;
    while (p < 9 && Math.fround(Number(f.toPrecision(p))) !== f) p++;
    exp = Number(f.toPrecision(p)).toExponential();
  } else {
    exp = v.toExponential();
  }
  // exp is "[-]d[.ddd]e[+-]n": the shortest digits and the decimal exponent.
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(exp) as RegExpExecArray;
  const sign = m[1] as string;
  const digits = `${m[2]}${m[3] ?? ''}`;
  const e = Number(m[4]);
  const abs = Math.abs(float32 ? Math.fround(v) : v);
  if (abs >= 1e-3 && abs < 1e7) {
    if (e >= 0) {
      const int = digits.slice(0, e + 1).padEnd(e + 1, '0');
      const frac = digits.slice(e + 1);
      return `${sign}${int}.${frac === '' ? '0' : frac}`;
    }
    return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  }
  return `${sign}${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}E${e}`;
}
