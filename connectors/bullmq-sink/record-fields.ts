/**
 * Reading record values: dot-path field lookup, Debezium envelopes (`before`,
 * `after`, `source`, `op`) and the JSON form job data takes in Redis.
 *
 * Values follow src/connect/api/schema.ts: structs are plain objects, maps are Map or
 * plain objects, int64 beyond 2^53 is bigint, bytes are Uint8Array. Job data is JSON
 * in Redis, so bigint becomes a decimal string and bytes base64 (as Kafka's
 * JsonConverter writes them): nothing is dropped on the way.
 */

/** The value at `path` (an empty path is `root` itself); undefined when any step is missing. */
export function fieldAt(root: unknown, path: readonly string[]): unknown {
  let v: unknown = root;
  for (const name of path) {
    if (v instanceof Map) v = v.get(name);
    else if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array))
      v = (v as Record<string, unknown>)[name];
    else return undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

/** Text of a string, number, bigint or boolean; undefined for anything else. */
export function scalarText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !Array.isArray(v);
}

/** The `source` block of a Debezium envelope, or undefined when the value is none. */
export function debeziumSource(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  const source = value.source;
  return isObject(source) ? source : undefined;
}

/**
 * The row image a job of a change event carries: `after`, or `before` for a delete
 * (op `d`), as Debezium's envelope has them. Undefined when the value is no envelope
 * (no `op`, or the image is missing).
 */
export function rowImage(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value) || typeof value.op !== 'string') return undefined;
  const image = value.op === 'd' ? value.before : value.after;
  return isObject(image) ? image : undefined;
}

/** A value in the JSON form job data is stored in (see the header). */
export function jsonSafe(v: unknown): unknown {
  if (v === null || v === undefined) return v ?? null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) out[String(k)] = jsonSafe(x);
    return out;
  }
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = jsonSafe(x);
    return out;
  }
  return v;
}
