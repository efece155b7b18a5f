/**
 * The key fields of a change event's row, for ExtractNewRecordState's rewritten
 * deletes: the fields a delete's `before` holds placeholders in (the source names
 * them in BEFORE_PLACEHOLDERS_HEADER) show null, except the key's.
 *
 * The key fields are the record key's: its struct schema's fields, or a schemaless
 * key object's keys. A key that is not a struct, or has a field the row lacks
 * (message.key.columns naming a column that is not captured), gives no answer, and the
 * row is then kept as it is.
 *
 * Pure functions; key fields of schema'd records are cached per (key, row) schema pair.
 */
import { type ConnectRecord, isStructValue, type Schema } from '../api/index.ts';

export interface KeyFields {
  names: ReadonlySet<string>;
  /** The names joined: a cache key for schemas derived from them. */
  id: string;
}

const bySchemas = new WeakMap<Schema, WeakMap<Schema, KeyFields | null>>();

/** The record key's field names, when all are fields of the row; null otherwise. */
export function keyFields(
  record: ConnectRecord,
  rowSchema: Schema | null,
  row: Record<string, unknown>,
): KeyFields | null {
  const keySchema = record.keySchema ?? null;
  if (keySchema !== null && rowSchema !== null) {
    let byRow = bySchemas.get(keySchema);
    if (byRow === undefined) {
      byRow = new WeakMap();
      bySchemas.set(keySchema, byRow);
    }
    let found = byRow.get(rowSchema);
    if (found === undefined) {
      found = compute(keySchema, record.key, rowSchema, row);
      byRow.set(rowSchema, found);
    }
    return found;
  }
  return compute(keySchema, record.key, rowSchema, row);
}

function compute(
  keySchema: Schema | null,
  key: unknown,
  rowSchema: Schema | null,
  row: Record<string, unknown>,
): KeyFields | null {
  const names =
    keySchema?.type === 'struct'
      ? (keySchema.fields ?? []).map((f) => f.name)
      : keySchema === null && isStructValue(key)
        ? Object.keys(key)
        : [];
  if (names.length === 0) return null;
  const inRow = (n: string) =>
    rowSchema === null ? n in row : rowSchema.fields?.some((f) => f.name === n) === true;
  return names.every(inRow) ? { names: new Set(names), id: names.join('\u0000') } : null;
}

/**
 * The row with null in each of `placeholders` that is not a key field (a key field
 * stays required in the flattened schema, so it keeps what it holds).
 */
export function withoutPlaceholders(
  row: Record<string, unknown>,
  placeholders: ReadonlySet<string>,
  keys: KeyFields,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const name of placeholders) if (name in out && !keys.names.has(name)) out[name] = null;
  return out;
}
