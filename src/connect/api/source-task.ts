/**
 * Source tasks: read from an external system and hand records to the runtime, which
 * transforms, converts and produces them, then commits their source offsets.
 *
 * Threading and lifecycle contract (Node has one thread; "concurrently" below means
 * "while another call's promise is still pending"):
 *   - `start(config, context)` is called once, before anything else. The task reads
 *     where to resume from `context.offsetStorageReader` here.
 *   - `poll()` is called in a loop by the task's runner, never overlapping itself: the
 *     next poll starts after the previous one settled and its records were handed to
 *     the producer. It may wait for data (return a promise that settles later), but
 *     must settle within about a second when idle, and at once after `stop()`.
 *     Return null or [] when there is nothing yet. Throwing a RetriableException
 *     makes the runner back off and poll again; any other error fails the task.
 *   - `commitRecord(record, metadata)` is called once per record, in the order the
 *     broker acknowledged them (per topic partition, the order they were polled),
 *     possibly while a poll is pending. `metadata` is null when a transform dropped
 *     the record. Keep it fast: it runs on the producer's acknowledgement path.
 *   - `commit()` is called after the runner durably wrote the source offsets of every
 *     acknowledged record (each `offset.flush.interval.ms`), possibly while a poll
 *     is pending. This is where a CDC task confirms its position upstream (e.g.
 *     Postgres' flushed LSN): anything at or before the committed offsets is safe.
 *   - `stop()` is called once, possibly while `poll()` is pending. It must make a
 *     pending poll settle promptly (with null or the records it already has) and
 *     must release everything the task opened (files, sockets, timers) before its
 *     promise settles. After stop settles the runtime calls nothing else on the
 *     instance, and a restart uses a fresh instance from the manifest's factory.
 * A crash (or a kill) between produce and offset commit re-delivers records on restart:
 * tasks give at-least-once, so `start` resumes from the last committed offset.
 */
import type { Clock } from '../../util/clock.ts';
import type { SourceRecord } from './connect-record.ts';
import type { TaskConfig } from './connector.ts';
import type { OffsetStorageReader } from './offset-storage-reader.ts';
import type { PluginMetrics } from './plugin-metrics.ts';

/** Where the broker stored a produced record. */
export interface RecordMetadata {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
}

export interface SourceTaskContext {
  readonly connectorName: string;
  /** 0-based index of this task among the connector's tasks. */
  readonly taskId: number;
  readonly offsetStorageReader: OffsetStorageReader;
  /** Time source for rate limits and timeouts; tests inject a ManualClock. */
  readonly clock: Clock;
  /**
   * Say what keeps the task from doing its work while it stays RUNNING (retrying a
   * lost connection, waiting for a resource another process holds): the runtime
   * publishes `detail` as the `trace` of the task's RUNNING status, so
   * `GET /connectors/{name}/status` tells the truth. null clears it once the task
   * works again. Repeating the current detail is a no-op. A task that gives up
   * throws from poll() as usual (FAILED). While the connector is paused the detail is
   * kept (PAUSED shows no trace) and shown again on resume; once the task failed or
   * was stopped, calls are ignored. A call during start() is shown from the first
   * RUNNING on.
   */
  reportTrouble(detail: string | null): void;
  /**
   * Topic configs for a topic this task will write to, applied over the connector's
   * `topic.creation.*` group settings when the runtime creates that topic (an
   * existing topic is left as it is). Call it before the first record for the topic
   * is returned from poll(); a later call for the same topic replaces the earlier one,
   * and a call after the topic's first record is logged and ignored. Nothing happens
   * when the runtime creates no topics for the connector (topic creation off). A CDC
   * task marks the topic of a table without a key `cleanup.policy=delete`, because a
   * compacted topic refuses records without a key.
   */
  topicCreationOverride(topic: string, configs: Readonly<Record<string, string>>): void;
  /**
   * Where the task ends transactions itself: set only when the worker runs the task
   * exactly-once and the connector has `transaction.boundary=connector`, null otherwise
   * (Kafka Connect's SourceTaskContext.transactionContext()).
   */
  readonly transactionContext: TransactionContext | null;
  /**
   * The task's own metrics, served on the worker's GET /metrics with its connector and
   * task labels and removed when the task stops (plugin-metrics.ts; Kafka 4.0's
   * SourceTaskContext.pluginMetrics()). The same handle on every call.
   */
  pluginMetrics(): PluginMetrics;
  /**
   * The worker's bootstrap.servers: the Kafka cluster the runtime produces this task's
   * records to, for a task that reads a topic of its own there (topic-reader.ts), as
   * Debezium's signal channel does. Absent where a task runs without a worker (test
   * harnesses).
   */
  readonly bootstrapServers?: readonly string[];
}

/**
 * Transaction boundaries a source task defines (KIP-618's TransactionContext). The
 * runtime commits or aborts at the first point after the request where it can: after
 * the batch the current poll returns, or right after the given record. Aborted
 * records are never seen by read_committed readers; their offsets are still
 * committed, so the task does not read them again. Asking both to commit and to
 * abort at the same point fails the task. At stop, an open transaction is committed
 * only if the task asked for it.
 */
export interface TransactionContext {
  /** Commit the open transaction after the records of the current poll are processed. */
  commitTransaction(): void;
  /** Commit it right after `record` (one the current or an earlier poll returned). */
  commitTransaction(record: SourceRecord): void;
  /** Abort the open transaction after the records of the current poll are processed. */
  abortTransaction(): void;
  /** Abort it right after `record`: `record` and those before it in the transaction are dropped. */
  abortTransaction(record: SourceRecord): void;
}

export interface SourceTask {
  version(): string;
  start(config: TaskConfig, context: SourceTaskContext): Promise<void> | void;
  poll(): Promise<SourceRecord[] | null>;
  commit?(): Promise<void> | void;
  commitRecord?(record: SourceRecord, metadata: RecordMetadata | null): Promise<void> | void;
  stop(): Promise<void> | void;
}
