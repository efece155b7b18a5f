/**
 * The writer of one Kafka topic partition: buffers its records into one open file per
 * encoded partition, rotates, and uploads finished files to the store.
 *
 * States: idle (no open group) -> open group (files buffering, offsets G..) -> closed
 * group (encoded, waiting in `pending` for upload) -> durable. A "group" is every file
 * the partition has open at a rotation; its files share G..E in their footers
 * (recovery.ts explains why that makes recovery exact).
 *
 * Rotation, checked per record in this order:
 *   1. a boundary recovered from an incomplete group (replay closes exactly there);
 *   2. rotate.interval.ms: the record's time (partitioner's timestamp extractor) is
 *      that far past the group's first record time -> close before this record;
 *   3. rotate.schedule.interval.ms: the task clock passed the next boundary aligned to
 *      multiples of the interval (UTC) -> close before this record; tick() does the
 *      same for idle partitions;
 *   4. a schema change the open files cannot absorb (schema-evolution.ts);
 *   5. flush.size records in the group -> close after this record.
 * 1, 2, 4 and 5 depend only on the records, so a replay cuts the same groups. 3 and
 * early flushes under memory pressure (closeGroup from the task) depend on timing;
 * their boundaries are in the footers, and recovery replays an interrupted group to
 * the same boundary. Not exactly-once, by design: (a) a crash while replaying such a
 * group whose replay is itself cut early by memory pressure may leave stale files of
 * the first attempt next to the new ones; (b) the Wallclock timestamp extractor,
 * which may put replayed records in other folders; (c) changing flush.size, the
 * partitioner or the schema settings between the crash and the restart.
 *
 * Redelivery: records at or below the last consumed offset are skipped, so when put()
 * fails with a retriable store error and the runner hands the same batch again, the
 * buffers do not take records twice. Groups upload strictly in order and a group's
 * files only after the previous group is durable.
 *
 * Called only from the task (one call at a time): append/tick/closeGroup are
 * synchronous and CPU-bound; drain() is the only I/O.
 */
import {
  type Clock,
  DataException,
  type Schema,
  type SinkRecord,
} from '../../src/connect/api/index.ts';
import type { ParquetCodec } from './codecs.ts';
import { fileName, objectKey } from './file-naming.ts';
import { kafkaColumns, kafkaColumnValues } from './kafka-columns.ts';
import type { ObjectStore } from './object-store.ts';
import { encodeParquet } from './parquet-encoder.ts';
import type { Partitioner } from './partitioner.ts';
import { type GroupMetadata, groupKv, type RecoveredPosition } from './recovery.ts';
import { RowBuffer } from './row-buffer.ts';
import { type Compatibility, evolve } from './schema-evolution.ts';
import { inferSchema, matchesInference } from './schema-inference.ts';
import { type ParquetSchema, toParquetSchema } from './schema-mapping.ts';

const NO_EXTRAS: readonly unknown[] = [];
const EMPTY_STRUCT: Schema = Object.freeze({ type: 'struct', optional: true, fields: [] });

export type NullBehavior = 'fail' | 'ignore' | 'write';

export interface WriterSettings {
  topicsDir: string;
  padWidth: number;
  codec: ParquetCodec;
  flushSize: number;
  /** <= 0: off. */
  rotateIntervalMs: number;
  /** <= 0: off. */
  rotateScheduleIntervalMs: number;
  nullBehavior: NullBehavior;
  compatibility: Compatibility;
  storeKeys: boolean;
  storeHeaders: boolean;
  /** Files of one group uploaded at once. */
  uploadConcurrency: number;
}

interface OpenFile {
  encodedPartition: string;
  startOffset: number;
  buffer: RowBuffer;
}

interface ClosedGroup {
  meta: GroupMetadata;
  files: Array<{ key: string; bytes: Uint8Array; done: boolean }>;
  bytes: number;
}

export class TopicPartitionWriter {
  private files = new Map<string, OpenFile>();
  private groupStart: number | undefined;
  private groupBaseTime: number | undefined;
  private groupRecords = 0;
  private schema: Schema | undefined;
  private parquetSchema: ParquetSchema | undefined;
  /** The last record schema merged into `schema`, to skip comparing it again. */
  private lastIncoming: Schema | undefined;
  /** The last schema inferred for a schemaless value, reused while values match it. */
  private lastInferred: Schema | undefined;
  private lastOffset = -1;
  private durableNext: number | undefined;
  private pendingBoundary: number | undefined;
  private nextScheduledRotation = Number.POSITIVE_INFINITY;
  private readonly pending: ClosedGroup[] = [];
  private readonly extraColumns;
  /** Files written (made durable) by this writer, for logs and tests. */
  readonly written: string[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly s: WriterSettings,
    private readonly partitioner: Partitioner,
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {
    this.extraColumns = kafkaColumns(s);
  }

  /** Start from a position recovered from the store (or from the consumer's). */
  resumeAt(position: RecoveredPosition | undefined): void {
    this.reset();
    this.pending.length = 0;
    if (position === undefined) {
      this.lastOffset = -1;
      this.durableNext = undefined;
      this.pendingBoundary = undefined;
      return;
    }
    this.lastOffset = position.nextOffset - 1;
    this.durableNext = position.nextOffset;
    this.pendingBoundary = position.pendingBoundary;
  }

  /** Buffered plus encoded-but-not-uploaded bytes, for the task's memory cap. */
  get bufferedBytes(): number {
    let bytes = 0;
    for (const f of this.files.values()) bytes += f.buffer.estimatedBytes;
    for (const g of this.pending) bytes += g.bytes;
    return bytes;
  }

  get openBytes(): number {
    let bytes = 0;
    for (const f of this.files.values()) bytes += f.buffer.estimatedBytes;
    return bytes;
  }

  get hasOpenGroup(): boolean {
    return this.groupStart !== undefined;
  }

  /**
   * The next offset whose predecessors are all durable in the store (the offset to
   * commit to Kafka), or undefined when nothing is known yet. With nothing waiting for
   * upload, every offset before the open group's first record is durable or was never
   * written (a null ignored, a record a transform dropped).
   */
  committableOffset(): number | undefined {
    if (this.pending.length === 0) {
      if (this.groupStart !== undefined) return this.groupStart;
      if (this.lastOffset >= 0) return this.lastOffset + 1;
    }
    return this.durableNext;
  }

  /**
   * No open group and nothing waiting for upload: every record handed to the task
   * for this partition is durable or was never written, so the runner's position
   * (which counts records dropped before put) is safe to commit.
   */
  get isSettled(): boolean {
    return (
      this.groupStart === undefined &&
      this.pending.length === 0 &&
      this.pendingBoundary === undefined
    );
  }

  append(record: SinkRecord): void {
    const offset = record.kafkaOffset;
    if (offset <= this.lastOffset) return; // redelivered after a retriable failure
    if (this.pendingBoundary !== undefined && offset > this.pendingBoundary) {
      this.closeGroup();
      this.pendingBoundary = undefined;
    }
    const time =
      this.s.rotateIntervalMs > 0 || this.groupStart === undefined
        ? this.partitioner.recordTime(record)
        : undefined;
    if (
      this.groupStart !== undefined &&
      this.s.rotateIntervalMs > 0 &&
      time !== undefined &&
      this.groupBaseTime !== undefined &&
      time - this.groupBaseTime >= this.s.rotateIntervalMs
    ) {
      this.closeGroup();
    }
    this.tick(this.clock.now());

    if (record.value === null || record.value === undefined) {
      if (this.s.nullBehavior === 'fail') {
        throw new DataException(
          `record ${this.topic}-${this.partition}@${offset} has a null value and behavior.on.null.values=fail (use ignore or write)`,
        );
      }
      if (this.s.nullBehavior === 'ignore') {
        this.consumed(offset);
        return;
      }
    }

    const recordSchema = this.schemaOf(record);
    const encoded = this.partitioner.encodePartition(record);
    this.adoptSchema(recordSchema);
    if (this.groupStart === undefined) {
      this.groupStart = offset;
      this.groupBaseTime = time;
      if (this.s.rotateScheduleIntervalMs > 0 && this.pendingBoundary === undefined) {
        const now = this.clock.now();
        const interval = this.s.rotateScheduleIntervalMs;
        this.nextScheduledRotation = Math.floor(now / interval) * interval + interval;
      }
    }
    let file = this.files.get(encoded);
    if (file === undefined) {
      file = {
        encodedPartition: encoded,
        startOffset: offset,
        buffer: new RowBuffer(this.parquetSchema as ParquetSchema),
      };
      this.files.set(encoded, file);
    }
    try {
      file.buffer.append(
        record.value ?? null,
        this.extraColumns.length === 0 ? NO_EXTRAS : kafkaColumnValues(this.s, record),
      );
    } catch (e) {
      if (file.buffer.rows === 0) this.files.delete(encoded);
      if (this.files.size === 0) this.reset();
      throw new DataException(
        `record ${this.topic}-${this.partition}@${offset} does not fit its schema: ${(e as Error).message}`,
        { cause: e },
      );
    }
    this.groupRecords++;
    this.consumed(offset);
    if (this.groupRecords >= this.s.flushSize) this.closeGroup();
  }

  /** Scheduled rotation on the task clock; the task calls it on every put, even empty. */
  tick(now: number): void {
    if (
      this.groupStart !== undefined &&
      this.pendingBoundary === undefined &&
      now >= this.nextScheduledRotation
    ) {
      this.closeGroup();
    }
  }

  /** Encode every open file of the group and queue them for upload. */
  closeGroup(): void {
    if (this.groupStart === undefined || this.files.size === 0) {
      this.reset();
      return;
    }
    const meta: GroupMetadata = {
      topic: this.topic,
      partition: this.partition,
      start: this.groupStart,
      end: this.lastOffset,
      files: this.files.size,
    };
    const kv = groupKv(meta);
    const files = [...this.files.values()]
      .sort((a, b) => (a.encodedPartition < b.encodedPartition ? -1 : 1))
      .map((f) => {
        const name = fileName(
          { topic: this.topic, kafkaPartition: this.partition, startOffset: f.startOffset },
          this.s.padWidth,
        );
        const bytes = encodeParquet(f.buffer.schema, f.buffer.columns(), {
          codec: this.s.codec,
          kv,
        });
        return {
          key: objectKey(this.s.topicsDir, this.topic, f.encodedPartition, name),
          bytes,
          done: false,
        };
      });
    this.pending.push({ meta, files, bytes: files.reduce((n, f) => n + f.bytes.byteLength, 0) });
    this.reset();
  }

  /** Upload closed groups in order; a rejected drain leaves the rest for the next call. */
  async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending[0] as ClosedGroup;
      const todo = group.files.filter((f) => !f.done);
      for (let i = 0; i < todo.length; i += this.s.uploadConcurrency) {
        // Wait for every upload of the batch before reporting a failure, so no write
        // is still in flight when the caller retries or gives up.
        const results = await Promise.allSettled(
          todo.slice(i, i + this.s.uploadConcurrency).map(async (f) => {
            await this.store.put(f.key, f.bytes);
            f.done = true;
          }),
        );
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
      }
      this.pending.shift();
      for (const f of group.files) this.written.push(f.key);
      this.durableNext = group.meta.end + 1;
    }
  }

  private consumed(offset: number): void {
    this.lastOffset = offset;
    if (this.pendingBoundary !== undefined && offset >= this.pendingBoundary) {
      this.closeGroup();
      this.pendingBoundary = undefined;
    }
  }

  private schemaOf(record: SinkRecord): Schema {
    if (record.valueSchema) return record.valueSchema;
    if (record.value === null || record.value === undefined) {
      // A null first in its group has no columns of its own: an empty struct, which
      // the next schema extends (or, under NONE, replaces in a new file). Only the
      // Kafka columns then say anything, so store.kafka.keys should be on.
      if (this.schema) return this.schema;
      if (this.extraColumns.length === 0) {
        throw new DataException(
          `record ${this.topic}-${this.partition}@${record.kafkaOffset} is a null value starting a file: with behavior.on.null.values=write and store.kafka.keys=false it has nothing to write`,
        );
      }
      return EMPTY_STRUCT;
    }
    const last = this.lastInferred;
    if (last !== undefined && matchesInference(record.value, last, this.schema)) return last;
    const inferred = inferSchema(record.value, this.schema);
    if (inferred === undefined) throw new DataException('cannot infer a schema');
    this.lastInferred = inferred;
    return inferred;
  }

  /** Make the group's schema hold `incoming`: grow it, or rotate when it cannot. */
  private adoptSchema(incoming: Schema): void {
    if (incoming === this.lastIncoming) return;
    if (this.groupStart === undefined || this.schema === undefined) {
      this.setSchema(incoming);
    } else {
      const merged = evolve(this.schema, incoming, this.s.compatibility);
      if (merged === undefined) {
        this.closeGroup();
        this.setSchema(incoming);
      } else if (merged !== this.schema) {
        this.setSchema(merged);
        for (const f of this.files.values()) {
          f.buffer = f.buffer.withSchema(this.parquetSchema as ParquetSchema);
        }
      }
    }
    this.lastIncoming = incoming;
  }

  private setSchema(schema: Schema): void {
    this.schema = schema;
    this.parquetSchema = toParquetSchema(schema, {
      nullableColumns: this.s.nullBehavior === 'write',
      extraColumns: this.extraColumns,
    });
  }

  /**
   * Forget the open group, its schema included: a group's schema must depend only on
   * its own records, or a replay starting at the group would choose another one.
   */
  private reset(): void {
    this.files = new Map();
    this.schema = undefined;
    this.parquetSchema = undefined;
    this.lastIncoming = undefined;
    this.groupStart = undefined;
    this.groupBaseTime = undefined;
    this.groupRecords = 0;
    this.nextScheduledRotation = Number.POSITIVE_INFINITY;
  }
}
