/**
 * The writer of one Kafka topic partition: buffers its records into one open file per
 * encoded partition, rotates, and uploads finished files to the store.
 *
 * States: idle (no open group) -> open group (files buffering, offsets G..) -> closed
 * group (encoded, waiting in `pending` for upload) -> durable. A "group" is every file
 * the partition has open at a rotation; its files share G..E in their footers
 * (recovery.ts explains why that makes recovery exact).
 *
 * Tombstones (behavior.on.null.values=write, as Confluent's sink writes them): a null
 * value goes to the folder tombstone.encoded.partition names, whose file set has no
 * value file, only the keys file (store.kafka.keys is required) and, with
 * store.kafka.headers, the headers file. There the keys file is the set's commit point
 * (uploaded last, counted by recovery.ts). Tombstones take no part in the value schema,
 * and moving to or from their folder does not rotate on partition change (Confluent's
 * exception). fail throws a ConnectException; ignore skips the record before any
 * rotation check, as Confluent's task drops it before its writer sees it.
 *
 * File sets: with store.kafka.keys / store.kafka.headers each open value file has a
 * keys file and a headers file (record-views.ts) taking the same records in the same
 * order, each in its own format (keys.format.class, headers.format.class: Parquet
 * rows, or Avro/JSON records buffered as row-format files are) and named with that
 * format's extension; they are encoded, uploaded and made durable with it. A record goes into all
 * the files of its set or into none: its keys and headers rows are made before any row
 * is appended, and a row that fails is rolled back from the files it went into.
 *
 * Rotation, checked per record in this order:
 *   1. a boundary recovered from an incomplete group (replay closes exactly there);
 *   2. rotate.interval.ms: the record's time (partitioner's timestamp extractor) is
 *      that far past the group's first record time -> close before this record;
 *   3. rotate.schedule.interval.ms: the task clock passed the boundary the schedule
 *      gave when the group opened (rotation-schedule.ts: Confluent's multiples of the
 *      interval since local midnight in `timezone`) -> close before this record;
 *      tick() does the same for idle partitions;
 *   4. rotate.file.on.partition.change (with rotate.interval.ms and a time-based
 *      partitioner, as Confluent honours it): the record goes to another folder than
 *      the record before it -> close before this record;
 *   5. a schema change the open files cannot absorb (schema-evolution.ts), of the
 *      value or, with store.kafka.keys, of the key (the keys files' schema);
 *   6. flush.size records in the group -> close after this record.
 * 1, 2, 4, 5 and 6 depend only on the records, so a replay cuts the same groups. 3 and
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
 * buffers do not take records twice.
 *
 * Errant records: append() leaves no row of a record it throws for (a half-appended
 * row is rolled back, a file it opened is dropped, a schema Parquet cannot take is
 * refused before it cuts the group); rotations decided before the failure stand. When
 * the task reports such a record to the dead letter queue instead of failing, skip()
 * counts it as consumed: it belongs to the open group (inside its G..E) but to none of
 * its files. Whether a record is errant depends only on the record and the group
 * before it, so a replay skips the same records and cuts the same files.
 *
 * Uploads run in the background: closeGroup() hands the group's files to the encoder
 * (file-encoder.ts: large ones go to the encoder thread) and starts the upload loop,
 * which writes groups strictly in order, a group's files only after the previous
 * group is durable, and moves the committable offset only once a whole group is.
 * Within a group the keys and headers files go first and the value files last: the
 * value file is the commit point recovery counts (recovery.ts), so a value file in the
 * store always has its keys and headers files beside it. An
 * upload that fails stops the loop and is kept in `failure`; flushed() tries it again
 * and throws if it still fails, so the task sees the error on its next call. Files
 * are named by their group's first offsets and encoded deterministically, so a
 * retried or replayed upload writes the same object again.
 *
 * Formats (format.class, file-format.ts): Parquet files buffer as columns (row-buffer.ts)
 * and carry their group in the footer; JSON, ByteArray and Avro files buffer records
 * (record-file-buffer.ts) and carry it in the object's metadata. Rotation, file sets
 * and the upload order are the same for every format.
 *
 * Called only from the task (one call at a time): append/tick/closeGroup are
 * synchronous and CPU-bound; the upload loop is the only I/O, and at most one runs.
 */
import {
  type Clock,
  ConnectException,
  DataException,
  getLogger,
  type Schema,
  Schemas,
  type SinkRecord,
} from '../../src/connect/api/index.ts';
import type { ParquetCodec } from './codecs.ts';
import type { SemanticTypes } from './debezium-types.ts';
import type { FileEncoder } from './file-encoder.ts';
import { type FormatSettings, formatExtension } from './file-format.ts';
import { fileName, objectKey } from './file-naming.ts';
import type { ObjectInfo, ObjectStore } from './object-store.ts';
import { type Partitioner, PartitionerError, tombstoneFolder } from './partitioner.ts';
import {
  newRecordFileBuffer,
  type RecordFileBuffer,
  rowFormatSchema,
} from './record-file-buffer.ts';
import {
  HEADERS_SCHEMA,
  HEADERS_VIEW_SCHEMA,
  headersRow,
  keyViewSchema,
  type RecordView,
  requireKey,
} from './record-views.ts';
import {
  type ForeignPosition,
  type GroupMetadata,
  groupKv,
  groupObjectMetadata,
  isForeign,
  type RecoveredPosition,
} from './recovery.ts';
import type { RotationSchedule } from './rotation-schedule.ts';
import { RowBuffer } from './row-buffer.ts';
import { type Compatibility, evolve } from './schema-evolution.ts';
import { InferenceError, inferSchema, matchesInference } from './schema-inference.ts';
import { type ParquetSchema, SchemaMappingError, toParquetSchema } from './schema-mapping.ts';

/** The group schema of schemaless records in JSON and ByteArray files (never written). */
const SCHEMALESS: Schema = Schemas.struct([], { name: 'connect.schemaless', optional: true });

/** A format's settings when it is a row format (Avro, JSON, ByteArray); undefined for Parquet. */
function rowFormatOf(
  f: FormatSettings | undefined,
): Exclude<FormatSettings, { kind: 'parquet' }> | undefined {
  return f === undefined || f.kind === 'parquet' ? undefined : f;
}

/** Every committed file is logged at INFO: where it is, its rows and bytes. */
const log = getLogger('connectors.parquet-sink');

export type NullBehavior = 'fail' | 'ignore' | 'write';

export interface WriterSettings {
  topicsDir: string;
  padWidth: number;
  /** file.delim and directory.delim ('+' and '/' when absent). */
  fileDelim?: string;
  dirDelim?: string;
  /** File name extension (file-naming.ts: `.snappy.parquet` for snappy). */
  extension: string;
  /**
   * format.class (file-format.ts); Parquet when absent. Row formats buffer records in
   * a RecordFileBuffer and put their group in the object's metadata (recovery.ts).
   */
  format?: FormatSettings;
  /**
   * rotate.file.on.partition.change, already limited to where Confluent honours it
   * (rotate.interval.ms > 0 and a time-based partitioner): close the group when a
   * record goes to another folder than the record before it.
   */
  rotateOnPartitionChange?: boolean;
  codec: ParquetCodec;
  /** parquet.compression.codec.zstd.level; the codec's default when absent. */
  zstdLevel?: number;
  flushSize: number;
  /** <= 0: off. */
  rotateIntervalMs: number;
  /** rotate.schedule.interval.ms in `timezone`; absent: off. */
  rotationSchedule?: RotationSchedule;
  nullBehavior: NullBehavior;
  /** How Debezium's semantic types are written (parquet.debezium.logical.types). */
  types?: SemanticTypes;
  compatibility: Compatibility;
  /** Keys files beside the value files (store.kafka.keys, record-views.ts). */
  storeKeys: boolean;
  /** Headers files beside the value files (store.kafka.headers). */
  storeHeaders: boolean;
  /** keys.format.class / headers.format.class (record-views.ts); Parquet when absent. */
  keysFormat?: FormatSettings;
  headersFormat?: FormatSettings;
  /** Files of one group uploaded at once. */
  uploadConcurrency: number;
}

/** The files of one encoded partition in the open group: a value file and its views. */
interface OpenFile {
  encodedPartition: string;
  startOffset: number;
  lastOffset: number;
  /** Undefined in the tombstone folder, which has keys and headers files only. */
  buffer: RowBuffer | RecordFileBuffer | undefined;
  /** The keys file's rows (store.kafka.keys), aligned with `buffer`'s. */
  keys: RowBuffer | RecordFileBuffer | undefined;
  /** The headers file's rows (store.kafka.headers), aligned with `buffer`'s. */
  headers: RowBuffer | RecordFileBuffer | undefined;
}

/** What append() did with a record. */
export type Appended = 'buffered' | 'null-ignored' | 'redelivered';

interface ClosedFile {
  key: string;
  /** Undefined for a value file. */
  view: RecordView | undefined;
  /** Uploaded last: a value file, or the keys file of the tombstone folder. */
  commitPoint: boolean;
  info: ObjectInfo;
  encoded: Promise<Uint8Array>;
  rows: number;
  /** The buffered rows' estimate until encoded, then the file's size (memory cap). */
  bytes: number;
  done: boolean;
}

interface ClosedGroup {
  meta: GroupMetadata;
  files: ClosedFile[];
}

/** Files made durable and their bytes, over every partition of a task (its metrics). */
export class WriteCounts {
  files = 0;
  bytes = 0;
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
  /** The open group's key schema (store.kafka.keys), as `schema` is for values. */
  private keySchema: Schema | undefined;
  private keyParquet: ParquetSchema | undefined;
  private lastKeyIncoming: Schema | undefined;
  private lastKeyInferred: Schema | undefined;
  /** The headers files' schema: the same for every record. */
  private readonly headersParquet: ParquetSchema | undefined;
  private lastOffset = -1;
  /** The folder of the last record buffered, for rotateOnPartitionChange. */
  private lastEncoded: string | undefined;
  /** The extension of the open group's files (a replayed group keeps its files'). */
  private groupExtension: string;
  /** The extension of the incomplete group recovery found, for its replay. */
  private replayExtension: string | undefined;
  private durableNext: number | undefined;
  private pendingBoundary: number | undefined;
  private nextScheduledRotation = Number.POSITIVE_INFINITY;
  private readonly pending: ClosedGroup[] = [];
  /** The running upload loop (it never rejects), if any. */
  private uploading: Promise<void> | undefined;
  /** Why the last upload loop stopped early; flushed() retries and throws it. */
  private failure: { error: unknown } | undefined;
  /** Files written (made durable) by this writer, for logs and tests. */
  readonly written: string[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly s: WriterSettings,
    private readonly partitioner: Partitioner,
    private readonly store: ObjectStore,
    private readonly clock: Clock,
    private readonly encoder: FileEncoder,
    /** Called each time a group became durable (the committable offset moved). */
    private readonly onDurable: () => void = () => undefined,
    /** Where durable files are counted (the task's, so counts outlive a revoked partition). */
    private readonly counts: WriteCounts = new WriteCounts(),
  ) {
    this.groupExtension = s.extension;
    const headersRowFormat = rowFormatOf(s.headersFormat);
    this.headersParquet = !s.storeHeaders
      ? undefined
      : headersRowFormat !== undefined
        ? rowFormatSchema(HEADERS_SCHEMA, headersRowFormat)
        : toParquetSchema(HEADERS_VIEW_SCHEMA, s.types ? { types: s.types } : {});
  }

  /**
   * Start from a position recovered from the store (or from the consumer's). Only
   * with no upload running (idle()): what was closed before is dropped.
   */
  resumeAt(position: RecoveredPosition | ForeignPosition | undefined): void {
    this.reset();
    this.pending.length = 0;
    this.failure = undefined;
    this.replayExtension = undefined;
    this.lastEncoded = undefined;
    if (position === undefined || isForeign(position)) {
      // A Confluent-written newest file: no seek; what is known to be there is skipped.
      this.lastOffset = position?.skipBelow !== undefined ? position.skipBelow - 1 : -1;
      this.durableNext = undefined;
      this.pendingBoundary = undefined;
      return;
    }
    this.lastOffset = position.nextOffset - 1;
    this.durableNext = position.nextOffset;
    this.pendingBoundary = position.pendingBoundary;
    if (position.pendingBoundary !== undefined) this.replayExtension = position.extension;
  }

  /** Buffered plus encoded-but-not-uploaded bytes, for the task's memory cap. */
  get bufferedBytes(): number {
    let bytes = this.openBytes;
    for (const g of this.pending) for (const f of g.files) if (!f.done) bytes += f.bytes;
    return bytes;
  }

  /** Closed groups not yet durable. */
  get queuedGroups(): number {
    return this.pending.length;
  }

  /** Whether the last background upload failed (flushed() tries it again). */
  get uploadFailed(): boolean {
    return this.failure !== undefined;
  }

  get openBytes(): number {
    let bytes = 0;
    for (const f of this.files.values()) {
      bytes += f.buffer?.estimatedBytes ?? 0;
      bytes += (f.keys?.estimatedBytes ?? 0) + (f.headers?.estimatedBytes ?? 0);
    }
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

  /**
   * Buffer one record. What makes this record unwritable (its value, its schema, what
   * the partitioner needs of it) throws a DataException naming it, the task's to fail
   * on or report as errant; other errors pass as they are.
   */
  append(record: SinkRecord): Appended {
    try {
      return this.buffer(record);
    } catch (e) {
      if (
        e instanceof PartitionerError ||
        e instanceof InferenceError ||
        e instanceof SchemaMappingError
      ) {
        throw new DataException(
          `record ${this.topic}-${this.partition}@${record.kafkaOffset} cannot be written: ${e.message}`,
          { cause: e },
        );
      }
      throw e;
    }
  }

  private buffer(record: SinkRecord): Appended {
    const offset = record.kafkaOffset;
    if (offset <= this.lastOffset) return 'redelivered'; // after a retriable failure
    if (this.pendingBoundary !== undefined && offset > this.pendingBoundary) {
      this.closeGroup();
      this.pendingBoundary = undefined;
    }
    const tombstone = record.value === null || record.value === undefined;
    if (tombstone) {
      if (this.s.nullBehavior === 'fail') {
        // The setting asks for a failure: a ConnectException, never an errant record.
        throw new ConnectException(
          `record ${this.topic}-${this.partition}@${offset} has a null value and behavior.on.null.values=fail (use ignore or write)`,
        );
      }
      if (this.s.nullBehavior === 'ignore') {
        this.consumed(offset);
        return 'null-ignored';
      }
      if (!this.s.storeKeys) {
        throw new ConnectException(
          'behavior.on.null.values=write writes the keys of null values: it needs store.kafka.keys=true',
        );
      }
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
    if (this.s.rotationSchedule !== undefined) this.tick(this.clock.now());

    const recordSchema = tombstone ? undefined : this.schemaOf(record);
    // The keys and headers rows are made first: a record they refuse goes nowhere.
    const key = this.s.storeKeys ? requireKey(record) : undefined;
    const keySchema = this.s.storeKeys ? this.keySchemaOf(record, key) : undefined;
    const headers = this.headersParquet !== undefined ? headersRow(record) : undefined;
    const tombstones = tombstoneFolder(this.s.nullBehavior, this.partitioner);
    const encoded = tombstone ? (tombstones as string) : this.partitioner.encodePartition(record);
    if (!tombstone && encoded === tombstones) {
      // Confluent fails the same way: that folder has no value writer.
      throw new ConnectException(
        `record ${this.topic}-${this.partition}@${offset} goes to the folder '${encoded}', which tombstone.encoded.partition keeps for null values: set tombstone.encoded.partition to a name the partitioner never gives`,
      );
    }
    if (
      this.s.rotateOnPartitionChange &&
      this.groupStart !== undefined &&
      this.lastEncoded !== undefined &&
      encoded !== this.lastEncoded &&
      encoded !== tombstones &&
      this.lastEncoded !== tombstones
    ) {
      this.closeGroup();
    }
    this.adoptSchemas(recordSchema, keySchema);
    if (this.groupStart === undefined) {
      this.groupStart = offset;
      this.groupBaseTime = time;
      this.groupExtension =
        this.pendingBoundary !== undefined
          ? (this.replayExtension ?? this.s.extension)
          : this.s.extension;
      if (this.s.rotationSchedule !== undefined && this.pendingBoundary === undefined) {
        this.nextScheduledRotation = this.s.rotationSchedule.next(this.clock.now());
      }
    }
    let file = this.files.get(encoded);
    if (file === undefined) {
      file = {
        encodedPartition: encoded,
        startOffset: offset,
        lastOffset: offset,
        buffer: tombstone ? undefined : this.valueBuffer(this.parquetSchema as ParquetSchema),
        keys: this.keyParquet && this.viewBuffer('keys', this.keyParquet),
        headers: this.headersParquet && this.viewBuffer('headers', this.headersParquet),
      };
      this.files.set(encoded, file);
    }
    // A row each file of the set fully took; a failing append has rolled back its own.
    const appended: Array<RowBuffer | RecordFileBuffer> = [];
    try {
      if (file.buffer !== undefined) {
        file.buffer.append(record.value ?? null, record);
        appended.push(file.buffer);
      }
      // Parquet views are enveloped rows; Avro and JSON ones the key or headers alone.
      if (file.keys !== undefined) {
        file.keys.append(file.keys instanceof RowBuffer ? { key } : key, record);
        appended.push(file.keys);
      }
      if (file.headers !== undefined) {
        file.headers.append(file.headers instanceof RowBuffer ? headers : headers?.headers, record);
      }
    } catch (e) {
      for (const b of appended) b.dropLast();
      if ((file.buffer ?? file.keys)?.rows === 0) this.files.delete(encoded);
      if (this.files.size === 0) this.reset();
      throw new DataException(
        `record ${this.topic}-${this.partition}@${offset} does not fit its schema: ${(e as Error).message}`,
        { cause: e },
      );
    }
    file.lastOffset = offset;
    this.lastEncoded = encoded;
    this.groupRecords++;
    this.consumed(offset);
    if (this.groupRecords >= this.s.flushSize) this.closeGroup();
    return 'buffered';
  }

  /**
   * A record append() threw for and the task reported instead (errant record): it is
   * consumed, written nowhere, and redelivered copies of it are skipped like others.
   */
  skip(record: SinkRecord): void {
    if (record.kafkaOffset > this.lastOffset) this.consumed(record.kafkaOffset);
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

  /** Hand every open file of the group to the encoder and queue them for upload. */
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
    const metadata = this.rowFormat !== undefined ? groupObjectMetadata(meta) : undefined;
    const open = [...this.files.values()].sort((a, b) =>
      a.encodedPartition < b.encodedPartition ? -1 : 1,
    );
    // Views first, values last: the order the upload loop makes them durable in.
    const files: ClosedFile[] = [];
    // The tombstone folder's keys file is its commit point: it goes with the values.
    for (const f of open) {
      if (f.keys && f.buffer) files.push(this.closedFile(f, f.keys, kv, 'keys', false));
    }
    for (const f of open) {
      if (f.headers) files.push(this.closedFile(f, f.headers, kv, 'headers', false));
    }
    for (const f of open) {
      files.push(
        f.buffer
          ? this.closedFile(f, f.buffer, kv, undefined, true, metadata)
          : this.closedFile(f, f.keys as RowBuffer | RecordFileBuffer, kv, 'keys', true, metadata),
      );
    }
    this.pending.push({ meta, files });
    this.reset();
    this.startUploads();
  }

  /** One file of a closed set, handed to the encoder. */
  private closedFile(
    f: OpenFile,
    buffer: RowBuffer | RecordFileBuffer,
    kv: Array<{ key: string; value: string }>,
    view: RecordView | undefined,
    commitPoint: boolean,
    metadata?: Record<string, string>,
  ): ClosedFile {
    const name = fileName(
      { topic: this.topic, kafkaPartition: this.partition, startOffset: f.startOffset },
      {
        padWidth: this.s.padWidth,
        delim: this.s.fileDelim ?? '+',
        extension: this.extensionOf(view),
      },
      view,
    );
    const estimate = buffer.estimatedBytes;
    const rows = buffer.rows;
    const file: ClosedFile = {
      view,
      commitPoint,
      rows,
      info: {
        startOffset: f.startOffset,
        endOffset: f.lastOffset,
        recordCount: rows,
        ...(metadata !== undefined ? { metadata } : {}),
      },
      key: objectKey(
        this.s.topicsDir,
        this.topic,
        f.encodedPartition,
        name,
        this.s.dirDelim ?? '/',
      ),
      encoded:
        buffer instanceof RowBuffer
          ? this.encoder.encode(buffer.schema, buffer.take(), estimate, {
              codec: this.s.codec,
              zstdLevel: this.s.zstdLevel,
              kv,
            })
          : // A row format encodes on this thread (record-file-buffer.ts); a throw rejects.
            new Promise<Uint8Array>((resolve) => resolve(buffer.encode())),
      bytes: estimate,
      done: false,
    };
    // Also the rejection's handler until the upload loop reaches this file: an
    // encoding error waits there, not as an unhandled rejection.
    file.encoded.then(
      (bytes) => {
        file.bytes = bytes.byteLength;
      },
      () => undefined,
    );
    return file;
  }

  /**
   * Resolves once every closed group is durable. After a failed background upload it
   * tries once more, and throws the error if that fails too (the failure stays, so
   * the next call tries again).
   */
  async flushed(): Promise<void> {
    await this.idle();
    if (this.failure !== undefined) {
      this.failure = undefined;
      this.startUploads();
      await this.idle();
    }
    // Read again: the loop that just ended may have set it (TypeScript cannot see that).
    const failure = this.failure as { error: unknown } | undefined;
    if (failure !== undefined) throw failure.error;
  }

  /** Resolves once no upload runs, without retrying or reporting a failure (revocation, stop). */
  async idle(): Promise<void> {
    // A loop that ends restarts itself for groups closed meanwhile: wait for that too.
    while (this.uploading !== undefined) await this.uploading;
  }

  private startUploads(): void {
    if (this.uploading !== undefined || this.failure !== undefined || this.pending.length === 0) {
      return;
    }
    this.uploading = this.upload().then(
      () => {
        this.uploading = undefined;
        this.startUploads(); // a group closed while the loop was finishing
      },
      (error: unknown) => {
        this.uploading = undefined;
        this.failure = { error };
      },
    );
  }

  /** Upload closed groups in order; a rejection leaves the rest queued. */
  private async upload(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending[0] as ClosedGroup;
      // Keys and headers files, then value files: no batch mixes the two, so no value
      // file (the commit point, recovery.ts) is in the store before its views.
      for (const values of [false, true]) {
        const todo = group.files.filter((f) => !f.done && f.commitPoint === values);
        for (let i = 0; i < todo.length; i += this.s.uploadConcurrency) {
          // Wait for every upload of the batch before reporting a failure, so no write
          // is still in flight when the caller retries or gives up.
          const results = await Promise.allSettled(
            todo.slice(i, i + this.s.uploadConcurrency).map(async (f) => {
              await this.store.put(f.key, await f.encoded, f.info);
              f.done = true;
            }),
          );
          const failed = results.find((r) => r.status === 'rejected');
          if (failed) throw (failed as PromiseRejectedResult).reason;
        }
      }
      this.pending.shift();
      for (const f of group.files) {
        this.written.push(f.key);
        this.counts.files++;
        this.counts.bytes += f.bytes;
        log.info(
          {
            topic: this.topic,
            partition: this.partition,
            file: f.key,
            rows: f.rows,
            bytes: f.bytes,
          },
          `committed ${f.key}: ${f.rows} rows, ${f.bytes} bytes`,
        );
      }
      this.durableNext = group.meta.end + 1;
      this.onDurable();
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
    // JSON and ByteArray write schemaless values as they are: one schema for all of them
    // (Confluent's: no schema, no schema change), nothing inferred.
    const row = this.rowFormat?.kind;
    if (row === 'json' || row === 'bytearray') return SCHEMALESS;
    const last = this.lastInferred;
    if (last !== undefined && matchesInference(record.value, last, this.schema)) return last;
    const inferred = inferSchema(record.value, this.schema);
    if (inferred === undefined) throw new DataException('cannot infer a schema');
    this.lastInferred = inferred;
    return inferred;
  }

  /**
   * The schema of a record's key: its own, or inferred for a schemaless key (JSON keys
   * files write a schemaless key as it is, as values).
   */
  private keySchemaOf(record: SinkRecord, key: unknown): Schema {
    if (record.keySchema) return record.keySchema;
    if (this.s.keysFormat?.kind === 'json') return SCHEMALESS;
    const last = this.lastKeyInferred;
    if (last !== undefined && matchesInference(key, last, this.keySchema)) return last;
    const inferred = inferSchema(key, this.keySchema);
    if (inferred === undefined) throw new DataException('cannot infer a schema for the key');
    this.lastKeyInferred = inferred;
    return inferred;
  }

  /**
   * Make the group's schemas hold `incoming` and `incomingKey` (with store.kafka.keys):
   * grow them, or rotate the whole file set when either cannot (schema.compatibility
   * applies to keys as to values). Parquet schemas are made before anything changes,
   * so a schema Parquet cannot take throws before it would cut the group.
   */
  private adoptSchemas(incoming: Schema | undefined, incomingKey: Schema | undefined): void {
    // A tombstone (no incoming value schema) leaves the value files' schema as it is.
    const sameValue = incoming === undefined || incoming === this.lastIncoming;
    const sameKey = incomingKey === this.lastKeyIncoming;
    if (sameValue && sameKey) return;
    const c = this.s.compatibility;
    if (this.groupStart === undefined) {
      const parquet = incoming && this.parquetFor(incoming);
      const keyParquet = incomingKey && this.keyParquetFor(incomingKey);
      this.setSchema(incoming, parquet);
      this.keySchema = incomingKey;
      this.keyParquet = keyParquet;
    } else {
      // A group of tombstones only has no value schema yet: the first value sets it.
      const merged =
        sameValue || this.schema === undefined
          ? (this.schema ?? incoming)
          : evolve(this.schema, incoming as Schema, c);
      const current = this.keySchema;
      const mergedKey =
        incomingKey === undefined || current === undefined
          ? incomingKey
          : sameKey
            ? current
            : evolve(current, incomingKey, c);
      if (
        (incoming !== undefined && merged === undefined) ||
        (incomingKey !== undefined && mergedKey === undefined)
      ) {
        const parquet = incoming && this.parquetFor(incoming);
        const keyParquet = incomingKey && this.keyParquetFor(incomingKey);
        this.closeGroup();
        this.setSchema(incoming, parquet);
        this.keySchema = incomingKey;
        this.keyParquet = keyParquet;
      } else {
        const parquet =
          merged !== undefined && merged !== this.schema ? this.parquetFor(merged) : undefined;
        const keyParquet =
          mergedKey !== undefined && mergedKey !== current
            ? this.keyParquetFor(mergedKey)
            : undefined;
        if (parquet !== undefined) {
          this.setSchema(merged, parquet);
          for (const f of this.files.values()) f.buffer = f.buffer?.withSchema(parquet);
        }
        if (keyParquet !== undefined) {
          this.keySchema = mergedKey;
          this.keyParquet = keyParquet;
          for (const f of this.files.values()) f.keys = f.keys?.withSchema(keyParquet);
        }
      }
    }
    if (incoming !== undefined) this.lastIncoming = incoming;
    this.lastKeyIncoming = incomingKey;
  }

  /** The row format of format.class, undefined for Parquet. */
  private get rowFormat(): Exclude<FormatSettings, { kind: 'parquet' }> | undefined {
    const f = this.s.format;
    return f === undefined || f.kind === 'parquet' ? undefined : f;
  }

  private valueBuffer(schema: ParquetSchema): RowBuffer | RecordFileBuffer {
    const row = this.rowFormat;
    return row === undefined ? new RowBuffer(schema) : newRecordFileBuffer(row, schema);
  }

  private parquetFor(schema: Schema): ParquetSchema {
    // A row format has no columns: its files keep the Connect schema (record-file-buffer.ts).
    const row = this.rowFormat;
    if (row !== undefined) return rowFormatSchema(schema, row);
    // Tombstones go to keys files only, so value columns keep their schema's optionality.
    return toParquetSchema(schema, this.s.types ? { types: this.s.types } : {});
  }

  /**
   * The keys file's schema: Confluent's KeyRecordView (record-views.ts), enveloped in
   * Parquet, the key's own in Avro and JSON.
   */
  private keyParquetFor(keySchema: Schema): ParquetSchema {
    const row = rowFormatOf(this.s.keysFormat);
    if (row !== undefined) return rowFormatSchema(keySchema, row);
    return toParquetSchema(keyViewSchema(keySchema), this.s.types ? { types: this.s.types } : {});
  }

  /** A keys or headers file's buffer, in its own format (keys.format.class, headers.format.class). */
  private viewBuffer(view: RecordView, schema: ParquetSchema): RowBuffer | RecordFileBuffer {
    const row = rowFormatOf(view === 'keys' ? this.s.keysFormat : this.s.headersFormat);
    if (row === undefined) return new RowBuffer(schema);
    return newRecordFileBuffer(row, schema, (r) =>
      view === 'keys' ? r.keySchema : HEADERS_SCHEMA,
    );
  }

  /**
   * A file's extension: the group's for value files and views of format.class's kind
   * (a replayed group keeps its files'), else the view's own format's (Confluent names
   * a keys file after its keys.format.class: `.keys.avro` beside `.snappy.parquet`).
   */
  private extensionOf(view: RecordView | undefined): string {
    if (view === undefined) return this.groupExtension;
    const f = (view === 'keys' ? this.s.keysFormat : this.s.headersFormat) ?? { kind: 'parquet' };
    if (f.kind === (this.s.format?.kind ?? 'parquet')) return this.groupExtension;
    return formatExtension(f, this.s.codec);
  }

  private setSchema(schema: Schema | undefined, parquet: ParquetSchema | undefined): void {
    this.schema = schema;
    this.parquetSchema = parquet;
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
    this.keySchema = undefined;
    this.keyParquet = undefined;
    this.lastKeyIncoming = undefined;
    this.groupStart = undefined;
    this.groupBaseTime = undefined;
    this.groupRecords = 0;
    this.nextScheduledRotation = Number.POSITIVE_INFINITY;
  }
}
