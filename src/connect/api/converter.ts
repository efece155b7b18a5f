/**
 * Converters turn Connect data (schema + value, see schema.ts) into the bytes of a
 * Kafka record key or value and back. The worker configures one for keys and one for
 * values (`key.converter`, `value.converter`, overridable per connector, with the
 * `key.converter.`/`value.converter.` prefixed keys passed to configure).
 *
 * Converters are called on the hot path of every record, from the task's runner, for
 * one task at a time (an instance is never shared between tasks).
 */
import type { Schema } from './schema.ts';

export interface SchemaAndValue {
  readonly schema: Schema | null;
  readonly value: unknown;
}

export interface Converter {
  /** Called once before use, with the converter's keys (prefix stripped). */
  configure(config: Readonly<Record<string, unknown>>, isKey: boolean): void;
  /**
   * Serialize. A null schema means schemaless data. Null in gives null out (a
   * tombstone) unless the converter has a reason to write something (e.g. a schema).
   * Throws DataException when the value does not match the schema.
   */
  fromConnectData(topic: string, schema: Schema | null, value: unknown): Buffer | null;
  /** Deserialize; null bytes give `{ schema: null, value: null }`. Throws DataException. */
  toConnectData(topic: string, bytes: Uint8Array | null): SchemaAndValue;
  /**
   * Optional: takes back bytes this converter's fromConnectData returned, once the caller
   * has read them for the last time, so their memory can be reused for later results.
   * The runtime calls it at most once per result, after the producer has copied the
   * bytes and the broker has acknowledged them; never for bytes it still holds.
   */
  release?(bytes: Buffer): void;
  close?(): void;
}
