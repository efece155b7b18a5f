/**
 * `store.kafka.keys` / `store.kafka.headers`: the record key and headers in files of
 * their own beside each value file, as Confluent's S3 sink writes them (its RecordViews:
 * KeyRecordView, HeaderRecordView), in keys.format.class / headers.format.class:
 *
 *   ParquetFormat  enveloped, as Confluent's ParquetFormat needs a struct:
 *     <name>.keys<ext>     one column `key`: the record key under its own schema
 *                          (struct RecordKey { key })
 *     <name>.headers<ext>  one column `headers`: list<struct { key: string, value: string }>
 *                          (struct RecordHeaders { headers }), values as text
 *   AvroFormat, JsonFormat  unenveloped, as Confluent's Avro and JSON writers ask for them:
 *     <name>.keys.avro / .keys.json        the key itself, under its schema
 *     <name>.headers.avro / .headers.json  the array of { key, value } strings
 *
 * where <name> is the value file's name without its extension and <ext> the view's
 * format's (file-naming.ts), which may differ from format.class's. The three files of one
 * file set hold the same records in the same order, so row i of each describes the
 * same record; the writer (topic-partition-writer.ts) appends a record to all of them
 * or to none.
 *
 * Confluent's strictness: with keys on, a record whose key is null cannot be written
 * ("Key cannot be null"); with headers on, a record without headers (none, or an
 * empty list) cannot either ("Headers cannot be null"). Both are record errors
 * (DataException), failed or sent to the dead letter queue under errors.tolerance.
 * A header value becomes text as Connect's Values.convertToString makes it for
 * primitives (strings as they are, bytes as base64, numbers and booleans printed);
 * structs, arrays and maps are written as JSON. The schema's value is required, as
 * Confluent's (Schema.STRING_SCHEMA), so a header with a null value fails the record.
 */
import {
  DataException,
  type Schema,
  Schemas,
  type SinkRecord,
} from '../../src/connect/api/index.ts';

/** Which file of a file set: the value file has no view suffix. */
export type RecordView = 'keys' | 'headers';

export const RECORD_VIEWS: readonly RecordView[] = ['keys', 'headers'];

/** The suffix Confluent puts before the format's extension (`.keys.snappy.parquet`). */
export function viewSuffix(view: RecordView | undefined): string {
  return view === undefined ? '' : `.${view}`;
}

export const KEY_FIELD = 'key';
export const HEADERS_FIELD = 'headers';

/** Confluent's HeaderRecordView.SINGLE_HEADER_SCHEMA: both fields required strings. */
const HEADER_SCHEMA = Schemas.struct([
  ['key', Schemas.string()],
  ['value', Schemas.string()],
]);

/** A record's headers, unenveloped: the row of an Avro or JSON headers file. */
export const HEADERS_SCHEMA: Schema = Schemas.array(HEADER_SCHEMA);

/** The headers file's row schema in Parquet (enveloped); the same for every record. */
export const HEADERS_VIEW_SCHEMA: Schema = Schemas.struct([[HEADERS_FIELD, HEADERS_SCHEMA]]);

/** The Parquet keys file's row schema for a key schema (enveloped). */
export function keyViewSchema(keySchema: Schema): Schema {
  return Schemas.struct([[KEY_FIELD, keySchema]]);
}

function where(record: SinkRecord): string {
  return `record ${record.topic}-${record.kafkaPartition}@${record.kafkaOffset}`;
}

/** The key, refused when null as Confluent refuses it. */
export function requireKey(record: SinkRecord): unknown {
  if (record.key === null || record.key === undefined) {
    throw new DataException(
      `${where(record)} cannot be written: key cannot be null with store.kafka.keys=true (Confluent's S3 sink refuses it too)`,
    );
  }
  return record.key;
}

/** The headers row: `{ headers: [{ key, value }] }`, refused when the record has none. */
export function headersRow(record: SinkRecord): { headers: Array<{ key: string; value: string }> } {
  const headers = record.headers;
  if (headers === undefined || headers === null || headers.length === 0) {
    throw new DataException(
      `${where(record)} cannot be written: headers cannot be null or empty with store.kafka.headers=true (Confluent's S3 sink refuses it too)`,
    );
  }
  return {
    headers: headers.map((h) => {
      const value = asText(h.value);
      if (value === null) {
        throw new DataException(
          `${where(record)} cannot be written: header '${h.key}' has a null value, and the headers file's value is a required string (as Confluent's)`,
        );
      }
      return { key: h.key, value };
    }),
  };
}

function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
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
