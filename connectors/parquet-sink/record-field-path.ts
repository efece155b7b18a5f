/**
 * Dotted field names (`partition.field.name`, `timestamp.field`) resolved as
 * Confluent's DataUtils resolves them (kafka-connect-storage-common 12.0+): every dot
 * separates a level, so `user.address.city` is the field `city` of the struct
 * `address` of the struct `user`, and a top-level field whose name contains a dot
 * cannot be named (Confluent's 12.0.0 changelog calls this out as breaking).
 *
 * Names split as Java's String.split("\\.") splits them: trailing empty parts are
 * dropped, so `a.` names `a`, while `.a` and `a..b` have an empty part, which
 * validation refuses (Confluent's PartitionFieldNameValidator).
 */
import type { Field, Schema } from '../../src/connect/api/index.ts';

/** The levels of a dotted name, as Java's `split("\\.")` gives them. */
export function pathParts(name: string): string[] {
  const parts = name.split('.');
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Why a `partition.field.name` entry is refused (Confluent's validator), or undefined. */
export function fieldNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'Field name cannot be null or empty';
  if (pathParts(name).some((p) => p.trim() === '')) {
    return 'Field name cannot contain an empty or whitespace-only path segment';
  }
  return undefined;
}

export type SchemaLookup =
  | { found: Field }
  | { missing: true }
  /** A level before the last is not a struct: Confluent's Schema.field() throws. */
  | { notStruct: string };

/** The schema field a dotted name reaches, walking struct schemas. */
export function nestedField(schema: Schema, parts: readonly string[]): SchemaLookup {
  let current: Schema = schema;
  let field: Field | undefined;
  for (let i = 0; i < parts.length; i++) {
    if (current.type !== 'struct') return { notStruct: parts.slice(0, i).join('.') };
    field = current.fields?.find((f) => f.name === parts[i]);
    if (field === undefined) return { missing: true };
    current = field.schema;
  }
  return { found: field as Field };
}

/**
 * The value a dotted name reaches in a struct or object value; undefined when a level
 * is null or absent (Confluent reads that as a null partition key).
 */
export function nestedValue(value: unknown, parts: readonly string[]): unknown {
  let v = value;
  for (const part of parts) {
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    v = v instanceof Map ? v.get(part) : (v as Record<string, unknown>)[part];
  }
  return v === null ? undefined : v;
}
