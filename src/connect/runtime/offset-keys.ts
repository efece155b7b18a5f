/**
 * Source offsets as Kafka Connect stores them: key `["<connector>",{<source partition>}]`
 * and value `{<source offset>}`, both schemaless JSON written by the internal JSON
 * converter (JsonConverter with schemas.enable=false), a null value for a deleted
 * (reset) offset. The same texts go to the offset file (standalone) and the offset
 * topic (distributed), so tools that read Kafka Connect's offsets read ours.
 *
 * Partitions match by value, whatever the key order of the map a task builds: we write
 * partition keys sorted, so one source partition always has one stored key. A key
 * written by another tool in another order is still read by `parseOffsetKey` (listing)
 * but is not found by lookup; Kafka's own writer sorts nothing either, so the same
 * caveat holds there.
 */
import type { OffsetValue, SourceOffset, SourcePartition } from '../api/connect-record.ts';
import { JsonConverter } from '../converters/json-converter.ts';

const internal = new JsonConverter();
internal.configure({ 'schemas.enable': 'false' }, false);

function sorted(map: Readonly<Record<string, OffsetValue>>): Record<string, OffsetValue> {
  const out: Record<string, OffsetValue> = {};
  for (const key of Object.keys(map).sort()) out[key] = map[key] as OffsetValue;
  return out;
}

function text(value: unknown): string {
  const bytes = internal.fromConnectData('', null, value);
  if (bytes === null) throw new Error('internal converter wrote null for a non-null value');
  const out = bytes.toString('utf8');
  // Read for the last time: a message never handed back keeps its whole output slab
  // (json-byte-output.ts) from being reused, so one offset per commit would keep every
  // slab the task's records are written to out of reuse.
  internal.release(bytes);
  return out;
}

function parse(textValue: string): unknown {
  return internal.toConnectData('', Buffer.from(textValue, 'utf8')).value;
}

export function offsetKey(connector: string, partition: SourcePartition): string {
  return text([connector, sorted(partition)]);
}

export function offsetValue(offset: SourceOffset): string {
  return text(sorted(offset));
}

/** The connector and partition of a stored key, or undefined for a key of another layout. */
export function parseOffsetKey(
  key: string,
): { connector: string; partition: SourcePartition } | undefined {
  let value: unknown;
  try {
    value = parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string') return undefined;
  const partition = toRecord(value[1]);
  return partition === undefined ? undefined : { connector: value[0], partition };
}

export function parseOffsetValue(value: string): SourceOffset | undefined {
  try {
    return toRecord(parse(value));
  } catch {
    return undefined;
  }
}

function toRecord(value: unknown): Record<string, OffsetValue> | undefined {
  if (value instanceof Map) return Object.fromEntries(value) as Record<string, OffsetValue>;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return value as Record<string, OffsetValue>;
  }
  return undefined;
}
