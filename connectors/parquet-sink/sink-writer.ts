/**
 * The Parquet sink's task-level core: one TopicPartitionWriter per assigned topic
 * partition, recovery on assignment, the memory cap, and the offsets that are safe
 * to commit. The SinkTask (parquet-sink-task.ts) is a thin adapter over this, so
 * everything here is tested without a Connect runtime.
 *
 * Memory cap (`buffer.memory.max.bytes`): buffered rows plus encoded files waiting
 * for upload are estimated per partition and checked every CHECK_EVERY records and
 * after each batch. Above the cap, the partitions holding the most buffered data close
 * their groups early (largest first) until the total is under half the cap, and the
 * files are uploaded before more records are taken: memory stays bounded however many
 * partitions are open. Early closes are not deterministic; recovery.ts makes them
 * exactly-once anyway by replaying an interrupted group to its recorded boundary.
 */
import {
  type Clock,
  ConnectException,
  RetriableException,
  type SinkRecord,
  type TopicPartition,
  type TopicPartitionOffset,
  topicPartitionKey,
} from '../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from './config.ts';
import { topicPrefix } from './file-naming.ts';
import { type ObjectStore, StoreError } from './object-store.ts';
import { createPartitioner } from './partitioner.ts';
import { recoverPosition } from './recovery.ts';
import { TopicPartitionWriter } from './topic-partition-writer.ts';

const CHECK_EVERY = 1000;
const UPLOAD_CONCURRENCY = 4;

export class ParquetSinkWriter {
  private readonly writers = new Map<string, TopicPartitionWriter>();

  constructor(
    private readonly config: ParquetSinkConfig,
    readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Recover the given partitions from the store. Returns where consumption must
   * resume for the partitions that have files; the others keep their consumer offset.
   */
  async open(partitions: readonly TopicPartition[]): Promise<TopicPartitionOffset[]> {
    const seeks: TopicPartitionOffset[] = [];
    for (const tp of partitions) {
      const writer = this.writerFor(tp.topic, tp.partition);
      const position = await this.storeCall(() =>
        recoverPosition(this.store, this.config.topicsDir, tp.topic, tp.partition),
      );
      writer.resumeAt(position);
      // Temporaries of writes a crash interrupted; the replay writes those files again.
      await this.storeCall(
        async () =>
          await this.store.discardIncomplete?.(
            topicPrefix(this.config.topicsDir, tp.topic),
            `${tp.topic}+${tp.partition}+`,
          ),
      );
      if (position)
        seeks.push({ topic: tp.topic, partition: tp.partition, offset: position.nextOffset });
    }
    return seeks;
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    // Finish uploads a previous put could not complete before taking more records.
    await this.drainAll();
    let sinceCheck = 0;
    for (const record of records) {
      this.writerFor(record.topic, record.kafkaPartition).append(record);
      if (++sinceCheck >= CHECK_EVERY) {
        sinceCheck = 0;
        if (this.enforceMemoryCap()) await this.drainAll();
      }
    }
    const now = this.clock.now();
    for (const w of this.writers.values()) w.tick(now);
    this.enforceMemoryCap();
    await this.drainAll();
  }

  /**
   * Scheduled rotation of idle partitions (rotate.schedule.interval.ms), which no put
   * reaches: the runner calls put only when records arrive, so the task runs this from
   * preCommit, every offset.flush.interval.ms. Uploads what the clock closed.
   */
  async tick(): Promise<void> {
    if (this.config.rotateScheduleIntervalMs <= 0) return;
    const now = this.clock.now();
    for (const w of this.writers.values()) w.tick(now);
    await this.drainAll();
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

  /** Drop the partitions' writers and buffers (revoked: another task will replay). */
  close(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.writers.delete(topicPartitionKey(tp));
  }

  writer(tp: TopicPartition): TopicPartitionWriter | undefined {
    return this.writers.get(topicPartitionKey(tp));
  }

  get bufferedBytes(): number {
    let total = 0;
    for (const w of this.writers.values()) total += w.bufferedBytes;
    return total;
  }

  async stop(): Promise<void> {
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
          codec: c.codec,
          flushSize: c.flushSize,
          rotateIntervalMs: c.rotateIntervalMs,
          rotateScheduleIntervalMs: c.rotateScheduleIntervalMs,
          nullBehavior: c.nullBehavior,
          compatibility: c.compatibility,
          storeKeys: c.storeKeys,
          storeHeaders: c.storeHeaders,
          uploadConcurrency: UPLOAD_CONCURRENCY,
        },
        createPartitioner(c.partitioner, this.clock),
        this.store,
        this.clock,
      );
      this.writers.set(key, w);
    }
    return w;
  }

  /** Close the largest groups while over the cap; true when any closed. */
  private enforceMemoryCap(): boolean {
    let total = this.bufferedBytes;
    if (total <= this.config.memoryMaxBytes) return false;
    const target = this.config.memoryMaxBytes / 2;
    const bySize = [...this.writers.values()]
      .filter((w) => w.hasOpenGroup)
      .sort((a, b) => b.openBytes - a.openBytes);
    let closed = false;
    for (const w of bySize) {
      if (total <= target) break;
      const before = w.bufferedBytes;
      w.closeGroup();
      closed = true;
      // Encoded files waiting for upload still count until drained.
      total -= before - w.bufferedBytes;
    }
    return closed;
  }

  private async drainAll(): Promise<void> {
    await this.storeCall(() => Promise.all([...this.writers.values()].map((w) => w.drain())));
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
