/**
 * The Parquet sink's task-level core: one TopicPartitionWriter per assigned topic
 * partition, recovery on assignment, the memory cap, and the offsets that are safe
 * to commit. The SinkTask (parquet-sink-task.ts) is a thin adapter over this, so
 * everything here is tested without a Connect runtime.
 *
 * put() does not wait for files: closed groups are encoded (large files on the
 * encoder thread) and uploaded in the background while the task takes more records,
 * and committableOffsets() moves as they become durable. put() waits only to bound
 * memory, and first retries an upload that failed in the background (its error then
 * fails that put: retriable store errors make the runner redeliver the batch).
 *
 * Memory cap (`buffer.memory.max.bytes`): buffered rows plus files waiting for
 * upload are estimated per partition and checked every CHECK_EVERY records and after
 * each batch. Above the cap, the partitions holding the most buffered data close
 * their groups early (largest first) until open data is under half the cap, and
 * every closed group is uploaded before more records are taken: memory stays bounded
 * however many partitions are open. Early closes are not deterministic; recovery.ts
 * makes them exactly-once anyway by replaying an interrupted group to its recorded
 * boundary. A partition with more than MAX_QUEUED_GROUPS closed groups not yet
 * durable also makes put() wait, so consuming cannot run ahead of a slow store or
 * encoder by more than that.
 *
 * Errant records: a record that cannot be written (it does not fit the file's schema,
 * its schema has no Parquet form or cannot be inferred, or it lacks what the
 * partitioner needs) fails put(), and with it the task. Given `reportErrant` (the
 * runner's errant record reporter, there when errors.tolerance=all), put() reports it
 * instead, skips it, and returns only once every report of the batch is done, so the
 * runner never commits past a record that reached neither a file nor the dead letter
 * queue. behavior.on.null.values=fail stays a failure: it is a ConnectException. A
 * null skipped under behavior.on.null.values=ignore is reported too, with Confluent's
 * report.null.values.to.dlq (on by default), once: not again when redelivered.
 */
import {
  type Clock,
  ConnectException,
  DataException,
  errorKind,
  RetriableException,
  type SinkRecord,
  type TopicPartition,
  type TopicPartitionOffset,
  topicPartitionKey,
} from '../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from './config.ts';
import { type EncoderPlacement, FileEncoder } from './file-encoder.ts';
import { formatExtension } from './file-format.ts';
import { topicPrefix } from './file-naming.ts';
import { type ObjectStore, StoreError } from './object-store.ts';
import { createPartitioner, partitionerKind, tombstoneFolder } from './partitioner.ts';
import { isForeign, recoverPosition } from './recovery.ts';
import { RotationSchedule } from './rotation-schedule.ts';
import { TopicPartitionWriter, WriteCounts } from './topic-partition-writer.ts';

const CHECK_EVERY = 1000;
const UPLOAD_CONCURRENCY = 4;
/** One group uploading and one encoding while the next fills: enough to overlap all three. */
const MAX_QUEUED_GROUPS = 2;
/** flush.size from which the encoder thread is started when partitions open. */
const PREPARE_ENCODER_MIN_ROWS = 10_000;

export class ParquetSinkWriter {
  private readonly writers = new Map<string, TopicPartitionWriter>();
  private readonly encoder: FileEncoder;
  /** Shared by the partition writers: building a zone's Intl formatters takes milliseconds. */
  private readonly rotationSchedule: RotationSchedule | undefined;
  /** Files made durable by this task and their bytes (parquet_sink_* metrics). */
  readonly written = new WriteCounts();

  constructor(
    private readonly config: ParquetSinkConfig,
    readonly store: ObjectStore,
    private readonly clock: Clock,
    private readonly options: {
      /** Where files are encoded (file-encoder.ts); tests force one side. */
      encoder?: EncoderPlacement;
      /** Called when files became durable: offsets can be committed (context.requestCommit). */
      onDurable?: () => void;
      /** Reports a record that cannot be written, which is then skipped (see above). */
      reportErrant?: (record: SinkRecord, error: Error) => Promise<void>;
    } = {},
  ) {
    this.encoder = new FileEncoder(options.encoder);
    this.rotationSchedule =
      config.rotateScheduleIntervalMs > 0
        ? new RotationSchedule(config.rotateScheduleIntervalMs, config.partitioner.timezone)
        : undefined;
  }

  /**
   * Recover the given partitions from the store. Returns where consumption must
   * resume for the partitions that have files; the others keep their consumer offset.
   */
  async open(partitions: readonly TopicPartition[]): Promise<TopicPartitionOffset[]> {
    const seeks: TopicPartitionOffset[] = [];
    for (const tp of partitions) {
      const writer = this.writerFor(tp.topic, tp.partition);
      // Recovery reads the store, and discardIncomplete needs no write in flight.
      await writer.idle();
      const c = this.config;
      const position = await this.storeCall(() =>
        recoverPosition(this.store, c.topicsDir, tp.topic, tp.partition, {
          delim: c.fileDelim,
          dirDelim: c.dirDelim,
          extensions: c.format.kind === 'parquet' ? [] : [formatExtension(c.format, c.codec)],
          // Tombstones written (behavior.on.null.values=write) add a folder to each rotation.
          oneFilePerGroup:
            partitionerKind(c.partitioner.className) === 'default' && c.nullBehavior !== 'write',
          tombstoneFolder: tombstoneFolder(c.nullBehavior, c.partitioner),
        }),
      );
      writer.resumeAt(position);
      // Temporaries of writes a crash interrupted; the replay writes those files again.
      await this.storeCall(
        async () =>
          await this.store.discardIncomplete?.(
            topicPrefix(c.topicsDir, tp.topic, c.dirDelim),
            `${tp.topic}${c.fileDelim}${tp.partition}${c.fileDelim}`,
          ),
      );
      // A Confluent-written partition resumes at its committed offset (recovery.ts).
      if (position && !isForeign(position))
        seeks.push({ topic: tp.topic, partition: tp.partition, offset: position.nextOffset });
    }
    // Large files will come: load the encoder thread while the first one fills.
    if (partitions.length > 0 && this.config.flushSize >= PREPARE_ENCODER_MIN_ROWS) {
      this.encoder.prepare();
    }
    return seeks;
  }

  /**
   * Buffer the records and close the groups they complete (or that the clock closes:
   * an empty put is the runner's call on an idle task). Returns before the closed
   * files are durable, unless memory or the upload queue is full.
   */
  async put(records: readonly SinkRecord[]): Promise<void> {
    await this.retryFailedUploads();
    let sinceCheck = 0;
    let last: TopicPartitionWriter | undefined;
    const report = this.options.reportErrant;
    const reports: Array<Promise<void>> = [];
    // An index, not for-of: the loop awaits, so an iterator would be a live object
    // (and a result object per record) rather than optimized away.
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as SinkRecord;
      // Batches come per partition: skip the map lookup while the partition repeats.
      const w =
        last !== undefined &&
        last.partition === record.kafkaPartition &&
        last.topic === record.topic
          ? last
          : this.writerFor(record.topic, record.kafkaPartition);
      last = w;
      try {
        // Confluent's report.null.values.to.dlq: a skipped null goes to the DLQ too.
        if (w.append(record) === 'null-ignored' && report && this.config.reportNullsToDlq) {
          reports.push(report(record, new DataException('Skipping null value record.')));
        }
      } catch (e) {
        if (report === undefined || errorKind(e) !== 'data') throw e;
        w.skip(record);
        reports.push(report(record, e as Error));
      }
      if (++sinceCheck >= CHECK_EVERY) {
        sinceCheck = 0;
        await this.relieveMemory();
      }
    }
    const now = this.clock.now();
    for (const w of this.writers.values()) w.tick(now);
    await this.relieveMemory();
    for (const w of this.writers.values()) {
      if (w.queuedGroups > MAX_QUEUED_GROUPS) await this.storeCall(() => w.flushed());
    }
    if (reports.length > 0) await Promise.all(reports);
  }

  /**
   * Resolves once every closed group is durable, throwing (after one more try) when
   * an upload fails. For tests and tools; the task itself never needs to wait.
   */
  async flushed(): Promise<void> {
    await this.storeCall(() => Promise.all([...this.writers.values()].map((w) => w.flushed())));
  }

  /**
   * Next offsets whose records are all durable, per partition that has one. `current`
   * (the runner's positions, records dropped before put included) is taken as is for
   * partitions whose writer holds nothing: trailing records a transform dropped or a
   * null ignored would otherwise keep the commit behind until the next record.
   */
  committableOffsets(current: readonly TopicPartitionOffset[] = []): TopicPartitionOffset[] {
    const positions = new Map(current.map((c) => [topicPartitionKey(c), c.offset]));
    const out: TopicPartitionOffset[] = [];
    for (const [key, w] of this.writers) {
      const position = positions.get(key);
      const offset =
        w.isSettled && position !== undefined
          ? Math.max(position, w.committableOffset() ?? position)
          : w.committableOffset();
      if (offset !== undefined) out.push({ topic: w.topic, partition: w.partition, offset });
    }
    return out;
  }

  /**
   * Drop the partitions' writers and buffers (revoked: another task will replay),
   * once their uploads in flight have settled: the next owner's recovery must not
   * race them.
   */
  async close(partitions: readonly TopicPartition[]): Promise<void> {
    for (const tp of partitions) {
      const key = topicPartitionKey(tp);
      await this.writers.get(key)?.idle();
      this.writers.delete(key);
    }
  }

  writer(tp: TopicPartition): TopicPartitionWriter | undefined {
    return this.writers.get(topicPartitionKey(tp));
  }

  get bufferedBytes(): number {
    let total = 0;
    for (const w of this.writers.values()) total += w.bufferedBytes;
    return total;
  }

  /** Topic partitions with a file group open (records buffered, not yet closed). */
  get openPartitions(): number {
    let n = 0;
    for (const w of this.writers.values()) if (w.hasOpenGroup) n++;
    return n;
  }

  /** Waits for uploads in flight (their failures no longer matter), then releases all. */
  async stop(): Promise<void> {
    await Promise.all([...this.writers.values()].map((w) => w.idle()));
    this.writers.clear();
    await this.store.close();
  }

  private writerFor(topic: string, partition: number): TopicPartitionWriter {
    const key = topicPartitionKey({ topic, partition });
    let w = this.writers.get(key);
    if (w === undefined) {
      const c = this.config;
      w = new TopicPartitionWriter(
        topic,
        partition,
        {
          topicsDir: c.topicsDir,
          padWidth: c.padWidth,
          fileDelim: c.fileDelim,
          dirDelim: c.dirDelim,
          extension: formatExtension(c.format, c.codec),
          format: c.format,
          rotateOnPartitionChange:
            c.rotateOnPartitionChange &&
            c.rotateIntervalMs > 0 &&
            ['time', 'daily', 'hourly'].includes(partitionerKind(c.partitioner.className)),
          codec: c.codec,
          zstdLevel: c.zstdLevel,
          flushSize: c.flushSize,
          rotateIntervalMs: c.rotateIntervalMs,
          rotationSchedule: this.rotationSchedule,
          nullBehavior: c.nullBehavior,
          types: c.types,
          compatibility: c.compatibility,
          storeKeys: c.storeKeys,
          storeHeaders: c.storeHeaders,
          keysFormat: c.keysFormat,
          headersFormat: c.headersFormat,
          uploadConcurrency: UPLOAD_CONCURRENCY,
        },
        createPartitioner({ ...c.partitioner, dirDelim: c.dirDelim }, this.clock),
        this.store,
        this.clock,
        this.encoder,
        this.options.onDurable,
        this.written,
      );
      this.writers.set(key, w);
    }
    return w;
  }

  /**
   * Over the cap: close the largest open groups until open data is under half the
   * cap, then wait until every closed group is durable (which frees what they hold).
   */
  private async relieveMemory(): Promise<void> {
    const cap = this.config.memoryMaxBytes;
    if (this.bufferedBytes <= cap) return;
    const bySize = [...this.writers.values()]
      .filter((w) => w.hasOpenGroup)
      .sort((a, b) => b.openBytes - a.openBytes);
    let open = bySize.reduce((n, w) => n + w.openBytes, 0);
    for (const w of bySize) {
      if (open <= cap / 2) break;
      open -= w.openBytes;
      w.closeGroup();
    }
    await this.flushed();
  }

  /**
   * Try again the uploads that failed in the background, waiting for them; throws
   * when one still fails. put() runs it before taking more records.
   */
  async retryFailedUploads(): Promise<void> {
    for (const w of this.writers.values()) {
      if (w.uploadFailed) await this.storeCall(() => w.flushed());
    }
  }

  /** Store errors become the runtime's: retriable ones retry the batch, others fail the task. */
  private async storeCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof StoreError) {
        throw e.retriable
          ? new RetriableException(e.message, { cause: e })
          : new ConnectException(e.message, { cause: e });
      }
      throw e;
    }
  }
}
