/**
 * Deciding, when a record's schema differs from the open file's, whether the file
 * can hold both (its schema grows) or a new file must start (rotation).
 *
 * Rows are buffered as columns and the Parquet schema is fixed only when the file is
 * encoded, so a file can take a new optional column mid-way: earlier rows read it as
 * null. `schema.compatibility` (Confluent's setting, in Avro's sense) says which
 * changes may share a file:
 *   NONE      any change starts a new file (Confluent's default)
 *   BACKWARD  the new schema may add optional fields and drop fields
 *   FORWARD   the new schema may add fields and drop optional ones
 *   FULL      both: add or drop optional fields only
 * Fields present in both must keep their type (optionality may widen); nested
 * structs follow the same rules. A merged field present in only one side becomes
 * optional. Anything else (a type change, a changed logical type or scale) starts a
 * new file. The decision depends only on the records in the file, so a replay makes
 * the same choice.
 */
import { type Field, type Schema, schemaEquals } from '../../src/connect/api/index.ts';

export type Compatibility = 'NONE' | 'BACKWARD' | 'FORWARD' | 'FULL';

export const COMPATIBILITIES: readonly Compatibility[] = ['NONE', 'BACKWARD', 'FORWARD', 'FULL'];

/** The schema a file needs to hold rows of both schemas, or undefined: start a new file. */
export function evolve(
  current: Schema,
  incoming: Schema,
  compatibility: Compatibility,
): Schema | undefined {
  if (current === incoming || schemaEquals(current, incoming)) return current;
  if (compatibility === 'NONE') return undefined;
  return merge(current, incoming, compatibility);
}

function merge(a: Schema, b: Schema, compatibility: Compatibility): Schema | undefined {
  if (a.type !== b.type || a.name !== b.name) return undefined;
  const optional = a.optional || b.optional;
  switch (a.type) {
    case 'struct':
      return mergeStruct(a, b, compatibility, optional);
    case 'array': {
      const value = merge(a.valueSchema as Schema, b.valueSchema as Schema, compatibility);
      return value && { ...a, optional, valueSchema: value };
    }
    case 'map': {
      if (!schemaEquals(a.keySchema, b.keySchema)) return undefined;
      const value = merge(a.valueSchema as Schema, b.valueSchema as Schema, compatibility);
      return value && { ...a, optional, valueSchema: value };
    }
    default:
      if (!sameParameters(a.parameters, b.parameters)) return undefined;
      return { ...a, optional };
  }
}

function mergeStruct(
  a: Schema,
  b: Schema,
  compatibility: Compatibility,
  optional: boolean,
): Schema | undefined {
  const mayAddRequired = compatibility === 'FORWARD';
  const mayDropRequired = compatibility === 'BACKWARD';
  const incoming = new Map((b.fields ?? []).map((f) => [f.name, f]));
  const fields: Field[] = [];
  for (const f of a.fields ?? []) {
    const other = incoming.get(f.name);
    if (other === undefined) {
      if (!f.schema.optional && !mayDropRequired) return undefined;
      fields.push({ name: f.name, index: fields.length, schema: { ...f.schema, optional: true } });
      continue;
    }
    const merged = merge(f.schema, other.schema, compatibility);
    if (merged === undefined) return undefined;
    fields.push({ name: f.name, index: fields.length, schema: merged });
    incoming.delete(f.name);
  }
  for (const f of incoming.values()) {
    if (!f.schema.optional && f.schema.defaultValue === undefined && !mayAddRequired) {
      return undefined;
    }
    fields.push({ name: f.name, index: fields.length, schema: { ...f.schema, optional: true } });
  }
  return { ...a, optional, fields };
}

function sameParameters(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a?.[k] === b?.[k]);
}
