/**
 * Records as connectors, transforms and converters see them: plain, immutable-by-
 * convention objects. A transform that changes a record returns a new object
 * (`{ ...record, topic }`), which keeps the record's kind (source or sink) and
 * every field it does not touch.
 *
 * Keys and values follow schema.ts's value conventions; a null schema means
 * "schemaless" (the value is whatever JSON-like data the connector produced).
 */
import type { Schema } from './schema.ts';

/** A record header. `schema` is absent for schemaless header values. */
export interface Header {
  readonly key: string;
  readonly value: unknown;
  readonly schema?: Schema | null;
}

export type TimestampType = 'NoTimestampType' | 'CreateTime' | 'LogAppendTime';

/** What source and sink records share; transforms work on this. */
export interface ConnectRecord {
  readonly topic: string;
  /** Null or absent: let the producer's partitioner choose (source records). */
  readonly kafkaPartition?: number | null;
  readonly keySchema?: Schema | null;
  readonly key?: unknown;
  readonly valueSchema?: Schema | null;
  readonly value?: unknown;
  /** Epoch milliseconds; null or absent lets the producer stamp the send time. */
  readonly timestamp?: number | null;
  readonly headers?: readonly Header[];
}

/**
 * A value allowed in source partitions and offsets. Kafka Connect stores them as
 * schemaless JSON in the offset topic and accepts primitives only; bigint covers
 * 64-bit positions (LSNs) beyond 2^53.
 */
export type OffsetValue = string | number | bigint | boolean | null;

/** Identifies a stream the source reads, e.g. `{ filename }` or `{ server, slot }`. */
export type SourcePartition = Readonly<Record<string, OffsetValue>>;

/** A position in a source partition, e.g. `{ position: 1234 }` or `{ lsn: 99n }`. */
export type SourceOffset = Readonly<Record<string, OffsetValue>>;

export interface SourceRecord extends ConnectRecord {
  readonly sourcePartition: SourcePartition;
  readonly sourceOffset: SourceOffset;
}

export interface SinkRecord extends ConnectRecord {
  readonly kafkaPartition: number;
  /** The record's offset in its topic partition. */
  readonly kafkaOffset: number;
  readonly timestampType: TimestampType;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/**
 * A consumer position: `offset` is the NEXT offset to read (last processed + 1), the
 * same convention as Kafka's committed offsets.
 */
export interface TopicPartitionOffset extends TopicPartition {
  readonly offset: number;
  readonly metadata?: string;
}

/** A stable string for keying maps by partition: `topic-partition`, as Kafka prints it. */
export function topicPartitionKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/**
 * Header a change-data-capture source puts on a delete (or the delete half of a key
 * change) whose `before` row lacks columns: Postgres under REPLICA IDENTITY DEFAULT
 * sends only the replica identity's columns of the old row. The other required
 * fields of `before` then hold placeholders ("" for text, 0 for numbers, as Debezium's
 * converters fill them), which nothing else in the record tells apart from real
 * values. The header names those fields: its value is an array of field names (a
 * JSON array in text once a header converter has written it). `unwrap` with a
 * rewrite delete mode shows them as null, as Debezium documents the rewritten delete.
 */
export const BEFORE_PLACEHOLDERS_HEADER = '__cdc.before.placeholders';

/** The field names BEFORE_PLACEHOLDERS_HEADER lists on `record`; empty when absent. */
export function beforePlaceholders(record: ConnectRecord): ReadonlySet<string> {
  const names = new Set<string>();
  for (const h of record.headers ?? []) {
    if (h.key !== BEFORE_PLACEHOLDERS_HEADER) continue;
    let v: unknown = h.value;
    if (v instanceof Uint8Array) v = Buffer.from(v).toString('utf8');
    if (typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        continue;
      }
    }
    if (Array.isArray(v)) for (const n of v) if (typeof n === 'string') names.add(n);
  }
  return names;
}
