/**
 * Sink tasks: receive records the runtime consumed (group `connect-<connector>`),
 * converted and transformed, and write them to an external system.
 *
 * Threading and lifecycle contract (all calls come from the task's runner, one at a
 * time, never overlapping for one instance):
 *   - `start(config, context)` once, first.
 *   - `open(partitions)` when partitions are assigned (after start, and on every
 *     rebalance), before any record of those partitions is put. A task that keeps
 *     its position in the destination (e.g. a Parquet sink naming files by start
 *     offset) calls `context.offset(...)` here to rewind or skip.
 *   - `put(records)` with each consumed batch (possibly empty, so a task can flush
 *     on time). Writes may be buffered. RetriableException: the runner pauses the
 *     consumer, redelivers the same batch after `context.timeout(ms)` (or a default
 *     back-off) and resumes. Any other error fails the task.
 *   - `preCommit(currentOffsets)` before each offset commit (`offset.flush.interval.ms`,
 *     on `context.requestCommit()`, before close and stop). `currentOffsets` hold, per
 *     assigned partition, the next offset after the last record put. Return the
 *     offsets that are durable in the destination; the runner commits exactly those
 *     (never more than currentOffsets). Omit a partition to commit nothing for it.
 *     Without preCommit, the runner calls `flush(currentOffsets)` and, when it
 *     settles, commits currentOffsets: flush must make everything put so far durable.
 *   - `close(partitions)` when partitions are revoked (rebalance, stop): drop their
 *     buffers and writers. The runner has already run preCommit for them.
 *   - `stop()` once, last, after close of every assigned partition. It must release
 *     every resource before its promise settles; nothing is called afterwards.
 * Only committed offsets survive a crash: records after them are delivered again, so a
 * sink that writes idempotently (same file name, same content) gets exactly-once output.
 */
import type { Clock } from '../../util/clock.ts';
import type { SinkRecord, TopicPartition, TopicPartitionOffset } from './connect-record.ts';
import type { TaskConfig } from './connector.ts';
import type { PluginMetrics } from './plugin-metrics.ts';

export interface SinkTaskContext {
  readonly connectorName: string;
  readonly taskId: number;
  readonly clock: Clock;
  /** The partitions currently assigned to this task. */
  assignment(): readonly TopicPartition[];
  /** Stop fetching these partitions (records already put are unaffected). */
  pause(partitions: readonly TopicPartition[]): void;
  resume(partitions: readonly TopicPartition[]): void;
  /** Ask for preCommit and an offset commit soon, without waiting for the interval. */
  requestCommit(): void;
  /**
   * Reset the consumer position of the given partitions: the next record put for each
   * has this offset. Applied before the next put; records already put are not recalled.
   */
  offset(offsets: readonly TopicPartitionOffset[]): void;
  /** Back-off before the batch that raised RetriableException is put again. */
  timeout(ms: number): void;
  /** As SourceTaskContext.reportTrouble: a detail shown in the RUNNING status' trace. */
  reportTrouble(detail: string | null): void;
  /**
   * Report one record the task cannot write (KIP-610): the runtime applies
   * `errors.tolerance` and the dead letter queue to it, and the task goes on with the
   * rest of the batch. The promise settles once the report is durable. Absent when
   * the connector has no error tolerance configured: then throw a DataException.
   */
  readonly errantRecordReporter?: (record: SinkRecord, error: Error) => Promise<void>;
  /** As SourceTaskContext.pluginMetrics: the task's own metrics on GET /metrics. */
  pluginMetrics(): PluginMetrics;
}

export interface SinkTask {
  version(): string;
  start(config: TaskConfig, context: SinkTaskContext): Promise<void> | void;
  open?(partitions: readonly TopicPartition[]): Promise<void> | void;
  put(records: readonly SinkRecord[]): Promise<void> | void;
  flush?(currentOffsets: readonly TopicPartitionOffset[]): Promise<void> | void;
  preCommit?(
    currentOffsets: readonly TopicPartitionOffset[],
  ): Promise<TopicPartitionOffset[]> | TopicPartitionOffset[];
  close?(partitions: readonly TopicPartition[]): Promise<void> | void;
  stop(): Promise<void> | void;
}
