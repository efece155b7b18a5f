/**
 * `store.kafka.keys` / `store.kafka.headers`: the record key and headers as extra
 * columns of the value file (`__kafka_key`, `__kafka_headers`).
 *
 * Confluent's S3 sink writes keys and headers to separate `.keys` / `.headers` files;
 * one file per batch keeps a row and its key together for readers (a CDC tombstone's
 * key is the only thing saying which row was deleted) and halves the object count.
 * Keys and header values are text: strings as they are, bytes as base64, anything
 * else as JSON, because keys of one topic may change type and a column may not.
 */

import type { SinkRecord } from '../../src/connect/api/index.ts';
import { type Schema, Schemas } from '../../src/connect/api/index.ts';

export const KEY_COLUMN = '__kafka_key';
export const HEADERS_COLUMN = '__kafka_headers';

export interface KafkaColumnSettings {
  storeKeys: boolean;
  storeHeaders: boolean;
}

export function kafkaColumns(s: KafkaColumnSettings): Array<{ name: string; schema: Schema }> {
  const out: Array<{ name: string; schema: Schema }> = [];
  if (s.storeKeys) out.push({ name: KEY_COLUMN, schema: Schemas.string({ optional: true }) });
  if (s.storeHeaders) {
    const header = Schemas.struct([
      ['key', Schemas.string()],
      ['value', Schemas.string({ optional: true })],
    ]);
    out.push({ name: HEADERS_COLUMN, schema: Schemas.array(header, { optional: true }) });
  }
  return out;
}

export function kafkaColumnValues(s: KafkaColumnSettings, record: SinkRecord): unknown[] {
  const out: unknown[] = [];
  if (s.storeKeys) out.push(asText(record.key));
  if (s.storeHeaders) {
    out.push((record.headers ?? []).map((h) => ({ key: h.key, value: asText(h.value) })));
  }
  return out;
}

export function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return JSON.stringify(v, (_k, x) =>
    typeof x === 'bigint'
      ? x.toString()
      : x instanceof Uint8Array
        ? Buffer.from(x).toString('base64')
        : x instanceof Map
          ? Object.fromEntries(x)
          : x,
  );
}
