/**
 * Operations on schemas and values that converters, transforms and connectors share:
 * validating a value against its schema (same rules as Kafka Connect's
 * ConnectSchema.validateValue, over schema.ts's value conventions), structural
 * equality and a canonical fingerprint (for caches keyed by schema, e.g. a Parquet
 * writer per value schema), and field lookups by name and by dotted path.
 */
import { DataException } from './errors.ts';
import type { Field, Schema } from './schema.ts';
import { LogicalType } from './schema.ts';

const INT_RANGE = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
} as const;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MS_PER_DAY = 86_400_000;

/** A short, safe rendering of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return `int64 ${value}`;
  if (value instanceof Uint8Array) return `bytes[${value.length}]`;
  if (Array.isArray(value)) return `array[${value.length}]`;
  if (value instanceof Map) return `map[${value.size}]`;
  if (typeof value === 'object') return 'object';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}...` : text}`;
}

/** Is this a struct value (a plain object, not an array, Map or bytes)? */
export function isStructValue(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Map) &&
    !(value instanceof Uint8Array)
  );
}

/**
 * The problem with a value for a schema, or undefined if it is valid. `path` names
 * the position in messages ("after.id", "[3]").
 */
export function checkValue(schema: Schema, value: unknown, path = ''): string | undefined {
  const at = path === '' ? '' : ` at '${path}'`;
  if (value === null || value === undefined) {
    return schema.optional ? undefined : `null value${at} for a required ${schema.type} schema`;
  }
  const bad = () => `expected ${schema.name ?? schema.type}${at}, got ${describeValue(value)}`;
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32': {
      const [min, max] = INT_RANGE[schema.type];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        return bad();
      }
      if (schema.name === LogicalType.Time && (value < 0 || value >= MS_PER_DAY)) {
        return `${bad()} (milliseconds of the day)`;
      }
      return undefined;
    }
    case 'int64':
      if (typeof value === 'number') return Number.isSafeInteger(value) ? undefined : bad();
      if (typeof value === 'bigint') {
        return value < INT64_MIN || value > INT64_MAX ? bad() : undefined;
      }
      return bad();
    case 'float32':
    case 'float64':
      return typeof value === 'number' ? undefined : bad();
    case 'boolean':
      return typeof value === 'boolean' ? undefined : bad();
    case 'string':
      return typeof value === 'string' ? undefined : bad();
    case 'bytes':
      return value instanceof Uint8Array ? undefined : bad();
    case 'array': {
      if (!Array.isArray(value)) return bad();
      const items = schema.valueSchema!;
      for (let i = 0; i < value.length; i++) {
        const p = checkValue(items, value[i], `${path}[${i}]`);
        if (p !== undefined) return p;
      }
      return undefined;
    }
    case 'map': {
      const entries =
        value instanceof Map ? [...value] : isStructValue(value) ? Object.entries(value) : null;
      if (entries === null) return bad();
      for (const [k, v] of entries) {
        const p =
          checkValue(schema.keySchema!, k, `${path}{key}`) ??
          checkValue(schema.valueSchema!, v, `${path}[${String(k)}]`);
        if (p !== undefined) return p;
      }
      return undefined;
    }
    case 'struct': {
      if (!isStructValue(value)) return bad();
      const fields = schema.fields ?? [];
      for (const f of fields) {
        const p = checkValue(f.schema, value[f.name], path === '' ? f.name : `${path}.${f.name}`);
        if (p !== undefined) return p;
      }
      if (Object.keys(value).length > fields.length) {
        const extra = Object.keys(value).find((k) => !fields.some((f) => f.name === k));
        if (extra !== undefined) {
          return `unknown field '${extra}'${at} for struct ${schema.name ?? ''}`.trimEnd();
        }
      }
      return undefined;
    }
  }
}

/** Throw a DataException if the value does not match the schema. */
export function validateValue(schema: Schema, value: unknown, path = ''): void {
  const problem = checkValue(schema, value, path);
  if (problem !== undefined) throw new DataException(`Invalid value: ${problem}`);
}

/** Deep equality of values as schema.ts carries them (bytes, bigint, Map included). */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    return (
      (typeof a === 'bigint' || typeof a === 'number') &&
      (typeof b === 'bigint' || typeof b === 'number') &&
      BigInt(a as bigint) === BigInt(b as bigint)
    );
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return (
      a instanceof Uint8Array &&
      b instanceof Uint8Array &&
      a.length === b.length &&
      a.every((x, i) => x === b[i])
    );
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => valuesEqual(x, b[i]))
    );
  }
  const ea = a instanceof Map ? [...a] : Object.entries(a);
  const mb = b instanceof Map ? b : new Map(Object.entries(b));
  return ea.length === mb.size && ea.every(([k, v]) => mb.has(k) && valuesEqual(v, mb.get(k)));
}

/** Structural equality, as Kafka's ConnectSchema.equals (doc and default included). */
export function schemaEquals(a: Schema | null | undefined, b: Schema | null | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  if (
    a.type !== b.type ||
    a.optional !== b.optional ||
    a.name !== b.name ||
    a.version !== b.version ||
    a.doc !== b.doc ||
    !valuesEqual(a.defaultValue ?? null, b.defaultValue ?? null) ||
    !valuesEqual(a.parameters ?? {}, b.parameters ?? {})
  ) {
    return false;
  }
  const fa = a.fields ?? [];
  const fb = b.fields ?? [];
  if (fa.length !== fb.length) return false;
  for (let i = 0; i < fa.length; i++) {
    if (fa[i].name !== fb[i].name || !schemaEquals(fa[i].schema, fb[i].schema)) return false;
  }
  return schemaEquals(a.keySchema, b.keySchema) && schemaEquals(a.valueSchema, b.valueSchema);
}

const fingerprints = new WeakMap<Schema, string>();

/**
 * A canonical string for a schema: equal schemas (schemaEquals) give equal strings,
 * so it can key a Map of per-schema state. Cached per schema object.
 */
export function schemaFingerprint(schema: Schema): string {
  let fp = fingerprints.get(schema);
  if (fp === undefined) {
    fp = JSON.stringify(canonical(schema));
    fingerprints.set(schema, fp);
  }
  return fp;
}

function canonical(s: Schema): unknown[] {
  const params = s.parameters
    ? Object.keys(s.parameters)
        .sort()
        .map((k) => [k, s.parameters![k]])
    : null;
  return [
    s.type,
    s.optional,
    s.name ?? null,
    s.version ?? null,
    s.doc ?? null,
    params,
    s.defaultValue === undefined ? null : canonicalValue(s.defaultValue),
    s.fields ? s.fields.map((f) => [f.name, canonical(f.schema)]) : null,
    s.keySchema ? canonical(s.keySchema) : null,
    s.valueSchema ? canonical(s.valueSchema) : null,
  ];
}

function canonicalValue(v: unknown): unknown {
  if (typeof v === 'bigint') return { n: v.toString() };
  if (v instanceof Uint8Array) return { b: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return v.map(canonicalValue);
  if (v instanceof Map)
    return { m: [...v].map(([k, x]) => [canonicalValue(k), canonicalValue(x)]) };
  if (typeof v === 'object' && v !== null) {
    return Object.keys(v)
      .sort()
      .map((k) => [k, canonicalValue((v as Record<string, unknown>)[k])]);
  }
  return v;
}

/** A struct field by name, or a DataException naming the struct and the field. */
export function requireField(schema: Schema, name: string): Field {
  const f = schema.type === 'struct' ? schema.fields?.find((x) => x.name === name) : undefined;
  if (f === undefined) {
    throw new DataException(
      `${schema.name ?? schema.type} schema has no field '${name}'` +
        (schema.fields ? ` (fields: ${schema.fields.map((x) => x.name).join(', ')})` : ''),
    );
  }
  return f;
}

/**
 * Look up a dotted path (`source.lsn`) through nested structs. Returns the field's
 * schema and value (value null when a struct on the way is null), or undefined when
 * the schema has no such path. With a null schema (schemaless), walks plain objects.
 */
export function lookupPath(
  schema: Schema | null,
  value: unknown,
  path: string,
): { schema: Schema | null; value: unknown } | undefined {
  let s = schema;
  let v = value;
  for (const part of path.split('.')) {
    if (s !== null) {
      const f = s.type === 'struct' ? s.fields?.find((x) => x.name === part) : undefined;
      if (f === undefined) return undefined;
      s = f.schema;
    }
    if (isStructValue(v)) v = v[part];
    else if (v instanceof Map) v = v.get(part);
    else if (v === null || v === undefined) v = null;
    else return undefined;
    if (s === null && v === undefined) return undefined;
  }
  return { schema: s, value: v ?? null };
}
