/**
 * Where source offsets live: a key/value map of serialized keys and values, shared by
 * every connector of the worker (keys carry the connector name, see
 * runtime/offset-keys.ts). Standalone mode keeps it in a file
 * (file-offset-backing-store.ts), distributed mode in the compacted offset topic;
 * tests use the in-memory one.
 *
 * Contract: `set` resolves only once the entries are durable (what "committed"
 * means for source offsets); a null value deletes the key. Reads see every
 * completed `set`. Calls may overlap; each `set` is applied atomically, in call order.
 */

export interface OffsetBackingStore {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Values of the given keys; keys with no value are absent from the map. */
  get(keys: readonly string[]): Promise<Map<string, string>>;
  /** Write (null: delete) every entry, atomically; resolves when durable. */
  set(entries: ReadonlyMap<string, string | null>): Promise<void>;
  /** Every entry, for listing a connector's offsets (REST GET /offsets). */
  entries(): Promise<Map<string, string>>;
}
