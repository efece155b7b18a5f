/**
 * Schemas for schemaless JSON values (JsonConverter with schemas.enable=false), so
 * such topics still become typed Parquet columns.
 *
 * Inference, per value:
 *   string -> string, boolean -> boolean, object -> struct (fields in first-seen
 *   order), array -> array of its elements' merged schema, Map -> map<string, ...>,
 *   bytes -> bytes, bigint -> int64,
 *   number -> int64 when integral, float64 otherwise; a number in a field the current
 *   file already holds as float64 stays float64, so `13` after `12.5` does not
 *   count as a type change.
 * Every inferred field is optional (JSON has no required fields), null values and
 * empty arrays add no field (their type is unknown) until a value shows one.
 * The result feeds schema-evolution.ts like any other schema, so new fields extend
 * the open file and a type conflict starts a new one.
 */
import { isStructValue, type Schema, Schemas } from '../../src/connect/api/index.ts';

export class InferenceError extends Error {
  readonly kind = 'inference';
}

/** The schema of a value, shaped by `hint` (the open file's schema) where ambiguous. */
export function inferSchema(value: unknown, hint?: Schema): Schema | undefined {
  if (value === null || value === undefined) return undefined;
  const o = { optional: true };
  switch (typeof value) {
    case 'string':
      return Schemas.string(o);
    case 'boolean':
      return Schemas.boolean(o);
    case 'bigint':
      return Schemas.int64(o);
    case 'number':
      return Number.isInteger(value) && hint?.type !== 'float64'
        ? Schemas.int64(o)
        : Schemas.float64(o);
  }
  if (value instanceof Uint8Array) return Schemas.bytes(o);
  if (Array.isArray(value)) {
    let element: Schema | undefined;
    for (const item of value) {
      const s = inferSchema(item, element ?? hint?.valueSchema);
      if (s === undefined) continue;
      element = element === undefined ? s : widen(element, s);
      if (element === undefined) {
        throw new InferenceError('array elements have different types');
      }
    }
    return element && Schemas.array(element, o);
  }
  if (value instanceof Map) {
    let element: Schema | undefined;
    for (const item of value.values()) {
      const s = inferSchema(item, element ?? hint?.valueSchema);
      if (s === undefined) continue;
      element = element === undefined ? s : widen(element, s);
      if (element === undefined) throw new InferenceError('map values have different types');
    }
    return element && Schemas.map(Schemas.string(), element, o);
  }
  if (isStructValue(value)) {
    const fields: Array<[string, Schema]> = [];
    for (const [name, v] of Object.entries(value)) {
      const hinted = hint?.fields?.find((f) => f.name === name)?.schema;
      const s = inferSchema(v, hinted);
      if (s !== undefined) fields.push([name, s]);
    }
    return Schemas.struct(fields, o);
  }
  throw new InferenceError(`cannot infer a schema for a ${typeof value}`);
}

/**
 * Whether inferSchema(value, hint) would return a schema equal to `inferred` (itself a
 * result of inferSchema), checked without building one. Schemaless topics usually
 * repeat one shape, so the writer keeps the last inferred schema and reuses it while
 * records match; inferring and comparing a fresh schema per record cost more than
 * writing the row. Conservative: arrays, maps and null struct fields answer false
 * and take the full path.
 */
export function matchesInference(value: unknown, inferred: Schema, hint?: Schema): boolean {
  switch (typeof value) {
    case 'string':
      return inferred.type === 'string';
    case 'boolean':
      return inferred.type === 'boolean';
    case 'bigint':
      return inferred.type === 'int64';
    case 'number':
      return (
        inferred.type ===
        (Number.isInteger(value) && hint?.type !== 'float64' ? 'int64' : 'float64')
      );
  }
  if (value instanceof Uint8Array) return inferred.type === 'bytes';
  if (!isStructValue(value) || Array.isArray(value) || value instanceof Map) return false;
  if (inferred.type !== 'struct') return false;
  const fields = inferred.fields ?? [];
  const hinted = hint?.fields === undefined ? undefined : fieldSchemas(hint);
  let i = 0;
  for (const name in value) {
    if (!Object.hasOwn(value, name)) continue;
    const v = (value as Record<string, unknown>)[name];
    const field = fields[i++];
    if (v === null || v === undefined || field === undefined || field.name !== name) return false;
    if (!matchesInference(v, field.schema, hinted?.get(name))) return false;
  }
  return i === fields.length;
}

const fieldSchemasOf = new WeakMap<Schema, Map<string, Schema>>();

/** A struct schema's fields by name, made once per schema (this runs per record). */
function fieldSchemas(schema: Schema): Map<string, Schema> {
  let byName = fieldSchemasOf.get(schema);
  if (byName === undefined) {
    byName = new Map((schema.fields ?? []).map((f) => [f.name, f.schema]));
    fieldSchemasOf.set(schema, byName);
  }
  return byName;
}

/** Elements of one array: int64 and float64 meet at float64; other differences fail. */
function widen(a: Schema, b: Schema): Schema | undefined {
  if (a.type === b.type && a.type !== 'struct' && a.type !== 'array' && a.type !== 'map') return a;
  const numbers = new Set([a.type, b.type]);
  if (numbers.size === 2 && numbers.has('int64') && numbers.has('float64')) {
    return Schemas.float64({ optional: true });
  }
  if (a.type === 'struct' && b.type === 'struct') {
    const fields = new Map((a.fields ?? []).map((f) => [f.name, f.schema]));
    for (const f of b.fields ?? []) {
      const prev = fields.get(f.name);
      const merged = prev === undefined ? f.schema : widen(prev, f.schema);
      if (merged === undefined) return undefined;
      fields.set(f.name, merged);
    }
    return Schemas.struct([...fields.entries()], { optional: true });
  }
  if (a.type === 'array' && b.type === 'array') {
    const v = widen(a.valueSchema as Schema, b.valueSchema as Schema);
    return v && Schemas.array(v, { optional: true });
  }
  return undefined;
}
