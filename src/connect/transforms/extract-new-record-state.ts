/**
 * ExtractNewRecordState, as Debezium's io.debezium.transforms.ExtractNewRecordState:
 * turns a change event envelope (`before`, `after`, `source`, `op`, `ts_ms`) into the
 * flat row state, which is what table-shaped sinks (Parquet) want.
 *
 *   c / u / r   the `after` row, plus the `add.fields` (e.g. `op,ts_ms,source.lsn`
 *               become `__op`, `__ts_ms`, `__source_lsn`; `name:alias` picks the name).
 *   d           per `delete.tombstone.handling.mode`:
 *                 drop                    the delete event and its tombstone are dropped
 *                 tombstone (default)     the delete event is dropped, tombstones kept
 *                 delete-to-tombstone     the delete event becomes a tombstone, the
 *                                         connector's tombstones are dropped
 *                 rewrite                 the `before` row with `__deleted: true`;
 *                                         tombstones dropped (non-deletes get false)
 *                 rewrite-with-tombstone  as rewrite, tombstones kept
 *               The deprecated `delete.handling.mode` (drop | rewrite | none) and
 *               `drop.tombstones` are honoured when the new key is not given.
 *   t           truncate events carry no row and are dropped.
 *   anything else (heartbeats, schema changes, messages, non-envelope values) passes
 *   through unchanged.
 *
 * A rewritten delete shows null for the columns the delete did not carry, as
 * Debezium's documentation shows it (`{"pk": 2, "cola": null, "__deleted": "true"}`):
 * a `before` that holds only the key (REPLICA IDENTITY DEFAULT; its other NOT NULL
 * columns hold the connector's placeholders, "" or 0, and the source names them in
 * BEFORE_PLACEHOLDERS_HEADER) has those fields nulled; any other `before` (REPLICA
 * IDENTITY FULL, or a source that names none) is kept as it is, since a real '' or 0
 * cannot be told from a placeholder by its value. So that those nulls
 * are valid, rewrite modes make the non-key fields optional in the flattened schema
 * of every event, inserts and updates included: one schema per table, whatever the
 * operation.
 *
 * `__deleted` is an optional boolean. (Debezium's InsertField writes the strings
 * "true" / "false" with an optional string schema; this runtime's Parquet tables and
 * examples query it as a boolean.) `add.headers` copies the same metadata into
 * headers. Works on structs with schemas (the flattened schema is computed once per
 * input schema and key) and on schemaless objects (which Debezium passes through
 * unflattened).
 */
import {
  type AnyConfigDef,
  beforePlaceholders,
  type ConnectRecord,
  DataException,
  define,
  type Header,
  isStructValue,
  lookupPath,
  oneOf,
  optional,
  parseConfigOrThrow,
  type Schema,
  Schemas,
  type Transformation,
} from '../api/index.ts';
import { type KeyFields, keyFields, withoutPlaceholders } from './key-only-before.ts';
import { structWithFields } from './record-part.ts';

type Mode = 'drop' | 'tombstone' | 'rewrite' | 'rewrite-with-tombstone' | 'delete-to-tombstone';
const MODES: Mode[] = [
  'drop',
  'tombstone',
  'rewrite',
  'rewrite-with-tombstone',
  'delete-to-tombstone',
];
const DELETED_FIELD = '__deleted';
const DELETED_SCHEMA = Schemas.boolean({ optional: true });

export const extractNewRecordStateConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'delete.tombstone.handling.mode',
    type: 'string',
    default: null,
    validator: oneOf(...MODES),
    importance: 'medium',
    doc: 'How to handle delete events and tombstones: drop, tombstone (default), rewrite, rewrite-with-tombstone, delete-to-tombstone.',
  }),
  define<string>({
    name: 'delete.handling.mode',
    type: 'string',
    default: null,
    validator: oneOf('drop', 'rewrite', 'none'),
    importance: 'low',
    doc: 'Deprecated: drop, rewrite or none (keep a null value) for delete events.',
  }),
  define<boolean | null>({
    name: 'drop.tombstones',
    type: 'boolean',
    default: null,
    importance: 'low',
    doc: 'Deprecated: drop tombstone records.',
  }),
  define<string[]>({
    name: 'add.fields',
    type: 'list',
    default: [],
    importance: 'low',
    doc: 'Envelope fields to add to the row, e.g. op,ts_ms,source.lsn or source.ts_ms:EVENT_TS.',
  }),
  define<string>({
    name: 'add.fields.prefix',
    type: 'string',
    default: '__',
    importance: 'low',
    doc: 'Prefix of the added field names.',
  }),
  define<string[]>({
    name: 'add.headers',
    type: 'list',
    default: [],
    importance: 'low',
    doc: 'Envelope fields to add as headers, named like add.fields.',
  }),
  define<string>({
    name: 'add.headers.prefix',
    type: 'string',
    default: '__',
    importance: 'low',
    doc: 'Prefix of the added header names.',
  }),
];

interface Addition {
  /** Path in the envelope, e.g. `source.lsn`. */
  path: string;
  /** Name in the row or header, e.g. `__source_lsn`. */
  name: string;
}

function additions(entries: string[], prefix: string): Addition[] {
  return entries.map((entry) => {
    const [path, alias] = entry.split(':').map((s) => s.trim());
    return { path, name: alias ?? prefix + path.replace(/\./g, '_') };
  });
}

/** Which envelope this is; null when the record is not a change event. */
function envelopeOf(
  schema: Schema | null,
  value: unknown,
): { op: string; before: unknown; after: unknown; rowSchema: Schema | null } | null {
  if (!isStructValue(value)) return null;
  if (schema !== null) {
    const has = (n: string) => schema.fields?.some((f) => f.name === n) === true;
    if (schema.type !== 'struct' || !has('op') || !has('after') || !has('before')) return null;
    const rowSchema = schema.fields!.find((f) => f.name === 'after')!.schema;
    return { op: String(value.op), before: value.before, after: value.after, rowSchema };
  }
  if (typeof value.op !== 'string' || !('after' in value)) return null;
  return { op: value.op, before: value.before, after: value.after, rowSchema: null };
}

export class ExtractNewRecordState implements Transformation {
  private mode: Mode = 'tombstone';
  private fields: Addition[] = [];
  private headers: Addition[] = [];
  /** Flattened schemas by envelope schema, then by key fields (KeyFields.id). */
  private readonly schemaCache = new WeakMap<Schema, Map<string, Schema>>();

  configure(config: Readonly<Record<string, unknown>>): void {
    const { values } = parseConfigOrThrow(extractNewRecordStateConfigDefs, config);
    this.mode = (values['delete.tombstone.handling.mode'] as Mode | null) ?? legacyMode(values);
    this.fields = additions(
      values['add.fields'] as string[],
      values['add.fields.prefix'] as string,
    );
    this.headers = additions(
      values['add.headers'] as string[],
      values['add.headers.prefix'] as string,
    );
  }

  apply<R extends ConnectRecord>(record: R): R | null {
    const value = record.value;
    if (value === null || value === undefined) {
      const keep = this.mode === 'tombstone' || this.mode === 'rewrite-with-tombstone';
      return keep ? record : null;
    }
    const envelopeSchema = record.valueSchema ?? null;
    const envelope = envelopeOf(envelopeSchema, value);
    if (envelope === null) return record;
    const rewrite = this.mode === 'rewrite' || this.mode === 'rewrite-with-tombstone';
    let row: unknown;
    let deleted = false;
    switch (envelope.op) {
      case 'd':
        if (this.mode === 'drop' || this.mode === 'tombstone') return null;
        if (this.mode === 'delete-to-tombstone') {
          return { ...record, value: null, valueSchema: null };
        }
        row = envelope.before;
        deleted = true;
        break;
      case 't':
        return null;
      case 'c':
      case 'u':
      case 'r':
        row = envelope.after;
        break;
      default:
        return record;
    }
    if (!isStructValue(row)) {
      throw new DataException(
        `Change event on ${record.topic} with op '${envelope.op}' has no ${deleted ? 'before' : 'after'} row`,
      );
    }
    // Only rewrites show a delete's row; its non-key fields are optional in their schema.
    const keys = rewrite ? keyFields(record, envelope.rowSchema, row) : null;
    const placeholders = deleted && keys !== null ? beforePlaceholders(record) : null;
    const out: Record<string, unknown> =
      placeholders !== null && keys !== null && placeholders.size > 0
        ? withoutPlaceholders(row, placeholders, keys)
        : { ...row };
    for (const a of this.fields) {
      const found = lookupPath(envelopeSchema, value, a.path);
      if (found !== undefined) out[a.name] = found.value;
    }
    if (rewrite) out[DELETED_FIELD] = deleted;
    const headers =
      this.headers.length > 0 ? this.withHeaders(record, envelopeSchema, value) : record.headers;
    const rowSchema =
      envelopeSchema === null || envelope.rowSchema === null
        ? null
        : this.flatSchema(envelopeSchema, envelope.rowSchema, rewrite, keys);
    return { ...record, valueSchema: rowSchema, value: out, headers };
  }

  private withHeaders(record: ConnectRecord, schema: Schema | null, value: unknown): Header[] {
    const out = [...(record.headers ?? [])];
    for (const h of this.headers) {
      const found = lookupPath(schema, value, h.path);
      if (found !== undefined) out.push({ key: h.name, value: found.value, schema: found.schema });
    }
    return out;
  }

  /**
   * The row schema plus the added fields (optional) and `__deleted`, cached. With
   * `keys` (rewrite modes) the other row fields are optional: a key-only delete nulls them.
   */
  private flatSchema(
    envelopeSchema: Schema,
    rowSchema: Schema,
    rewrite: boolean,
    keys: KeyFields | null,
  ): Schema {
    let byKey = this.schemaCache.get(envelopeSchema);
    if (byKey === undefined) {
      byKey = new Map();
      this.schemaCache.set(envelopeSchema, byKey);
    }
    const keyId = keys?.id ?? '';
    let flat = byKey.get(keyId);
    if (flat === undefined) {
      const fields: Array<[string, Schema]> = (rowSchema.fields ?? []).map((f) => [
        f.name,
        keys === null || keys.names.has(f.name) ? f.schema : optional(f.schema),
      ]);
      for (const a of this.fields) {
        const found = lookupPath(envelopeSchema, null, a.path);
        if (found?.schema) fields.push([a.name, optional(found.schema)]);
      }
      if (rewrite) fields.push([DELETED_FIELD, DELETED_SCHEMA]);
      flat = structWithFields(rowSchema, fields);
      byKey.set(keyId, flat);
    }
    return flat;
  }
}

function legacyMode(values: Record<string, unknown>): Mode {
  const deletes = values['delete.handling.mode'] as string | null;
  const dropTombstones = (values['drop.tombstones'] as boolean | null) ?? true;
  if (deletes === null && values['drop.tombstones'] === null) return 'tombstone';
  if (deletes === 'rewrite') return dropTombstones ? 'rewrite' : 'rewrite-with-tombstone';
  if (deletes === 'none') return dropTombstones ? 'delete-to-tombstone' : 'tombstone';
  return dropTombstones ? 'drop' : 'tombstone';
}
