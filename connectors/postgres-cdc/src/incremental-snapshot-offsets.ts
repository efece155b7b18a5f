/**
 * The incremental snapshot's state in the source offsets, under Debezium's names
 * (IncrementalSnapshotContext), so a restarted task resumes at the last chunk:
 *   incremental_snapshot_collections   JSON text, the tables still to read, the one
 *       being read first: [{ "incremental_snapshot_collections_id": "schema.table",
 *       "incremental_snapshot_collections_additional_condition": filter or null,
 *       "incremental_snapshot_collections_surrogate_key": null }]
 *   incremental_snapshot_primary_key   the key of the last row delivered from the
 *       first table, or absent before its first chunk
 *   incremental_snapshot_maximum_key   the first table's largest key when its reading
 *       began (rows inserted above it stream anyway)
 * Debezium writes both keys as hex of a Java-serialized Object[]; nothing outside the
 * JVM can read or write that, so here a key is the JSON array of its columns' text
 * forms (what Postgres prints, and accepts back as literals): an offset of Debezium's
 * own connector does not carry an incremental snapshot over, and the reverse.
 * Present on every offset while a snapshot is under way; absent once it is done.
 */
import type { OffsetValue, SourceOffset } from '../../../src/connect/api/index.ts';

export interface SnapshotCollection {
  /** schema.table */
  id: string;
  additionalCondition: string | null;
}

export interface IncrementalSnapshotState {
  collections: SnapshotCollection[];
  /** Text forms of the key columns, in key order. */
  lastKey: string[] | null;
  maxKey: string[] | null;
}

export const COLLECTIONS = 'incremental_snapshot_collections';
const PRIMARY_KEY = 'incremental_snapshot_primary_key';
const MAXIMUM_KEY = 'incremental_snapshot_maximum_key';

/** An offset without any snapshot state (to put the current one in its place). */
export function withoutState(offset: SourceOffset): SourceOffset {
  if (!(COLLECTIONS in offset)) return offset;
  const { [COLLECTIONS]: _c, [PRIMARY_KEY]: _p, [MAXIMUM_KEY]: _m, ...rest } = offset;
  return rest;
}

/** The offset fields of a state; null when no snapshot is under way. */
export function stateOffsetFields(
  state: IncrementalSnapshotState,
): Record<string, OffsetValue> | null {
  if (state.collections.length === 0) return null;
  const fields: Record<string, OffsetValue> = {
    [COLLECTIONS]: JSON.stringify(
      state.collections.map((c) => ({
        incremental_snapshot_collections_id: c.id,
        incremental_snapshot_collections_additional_condition: c.additionalCondition,
        incremental_snapshot_collections_surrogate_key: null,
      })),
    ),
  };
  if (state.lastKey) fields[PRIMARY_KEY] = JSON.stringify(state.lastKey);
  if (state.maxKey) fields[MAXIMUM_KEY] = JSON.stringify(state.maxKey);
  return fields;
}

/** The state a stored offset holds; null when it holds none (or not in this form). */
export function stateFromOffset(offset: SourceOffset | null): IncrementalSnapshotState | null {
  const text = offset?.[COLLECTIONS];
  if (typeof text !== 'string') return null;
  const parsed = parseJson(text);
  if (!Array.isArray(parsed)) return null;
  const collections: SnapshotCollection[] = [];
  for (const c of parsed) {
    const id = (c as Record<string, unknown>)?.incremental_snapshot_collections_id;
    const cond = (c as Record<string, unknown>)
      ?.incremental_snapshot_collections_additional_condition;
    if (typeof id !== 'string') return null;
    collections.push({ id, additionalCondition: typeof cond === 'string' ? cond : null });
  }
  return {
    collections,
    lastKey: keyFrom(offset?.[PRIMARY_KEY]),
    maxKey: keyFrom(offset?.[MAXIMUM_KEY]),
  };
}

function keyFrom(v: OffsetValue | undefined): string[] | null {
  if (typeof v !== 'string') return null;
  const parsed = parseJson(v);
  return Array.isArray(parsed) && parsed.every((x) => typeof x === 'string') ? parsed : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
