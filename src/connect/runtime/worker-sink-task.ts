/**
 * WorkerSinkTask: runs one sink task (Kafka Connect's class of the same name).
 *
 * Data path: a GroupConsumer (src/protocol/client/group-consumer.ts) in group
 * `connect-<connector>` on the connector's `topics` or `topics.regex` -> per fetched
 * batch, in chunks of at most `max.poll.records`: key, value and header converters ->
 * transforms -> task.put. The consumer sends its next Fetch before handing a batch
 * over (and the batch callback returns once the previous batch is delivered), so the
 * broker works on the next answer while this one is delivered; between
 * chunks the runner lets the event loop run once, so that answer is read off the
 * socket meanwhile (the broker cannot queue all of a large answer on a socket nobody
 * reads).
 * A batch fetched before a seek (context.offset, a rebalance) is dropped, by a
 * per-partition seek count it carries. A RetriableException from put redelivers the
 * same records after context.timeout(ms) (or a default back-off); other errors fail
 * the task. When no records came for IDLE_PUT_INTERVAL_MS (and the task is not
 * paused) the task gets put([]), as Kafka Connect calls it after a poll that returned
 * nothing, so a sink can close files on time; a RetriableException from it only
 * delays the next one. Conversion and transform errors follow errors.tolerance (skip,
 * log, dead letter queue); the errant record reporter is offered to the task when
 * errors.tolerance=all.
 *
 * Offsets: `currentOffsets` holds, per assigned partition, the offset after the last
 * record handed to put (skipped records included). Every offset.flush.interval.ms, on
 * context.requestCommit(), before partitions are closed and when stopping, the task's
 * preCommit(currentOffsets) (or flush + currentOffsets) says what is durable; only
 * those offsets, capped at currentOffsets, are committed to the group, after the dead
 * letter queue writes of tolerated records are acknowledged. Each offset the runner
 * refuses to commit is logged with its reason.
 *
 * Threading: every call on the task (open, put, preCommit/flush, close, stop) runs
 * through one SerialExecutor, so they never overlap. Rebalance (eager): before the
 * consumer rejoins, every assigned partition gets a commit; after the join, before
 * any record of the new generation is put, partitions no longer assigned get close(),
 * new ones open(), and seeks from context.offset() in open() set where they start.
 *
 * Timers (offset commit, idle put) run their job through the same executor and re-arm
 * when it settles; stopping cancels them.
 *
 * Stop: the batch in progress finishes its current chunk, then a last commit (while
 * the consumer is still a group member), close() of every assigned partition,
 * task.stop(), consumer.stop() (leaving the group). Nothing is called
 * on the task after its stop(). Crash: records after the last commit are delivered
 * again. Stop while task.start has not returned (the worker stops or abandons a task
 * stuck in start): the consumer (never started), the dead letter queue producer,
 * transforms and converters are released at once and stop() resolves; the task's own
 * stop() is called when its start returns, never during it.
 */
import {
  CommitFailedError,
  type ConsumedRecord,
  type FetchedBatch,
  type GroupConsumer,
} from '../../protocol/client/group-consumer.ts';
import type {
  Header,
  SinkRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../api/connect-record.ts';
import { topicPartitionKey } from '../api/connect-record.ts';
import type { Converter, SchemaAndValue } from '../api/converter.ts';
import { errorKind } from '../api/errors.ts';
import { noopPluginMetrics } from '../api/plugin-metrics.ts';
import type { SinkTask, SinkTaskContext } from '../api/sink-task.ts';
import type { ConsumedMessage } from '../errors/processing-context.ts';
import { skipped } from '../errors/retry-with-tolerance-operator.ts';
import type { ConnectorTaskId, TargetState } from '../herder/herder.ts';
import type { TaskMetrics } from '../metrics/connect-metrics.ts';
import { ConsumerLag, type EndOffsets } from '../metrics/consumer-lag.ts';
import type { SinkTaskMetrics } from '../metrics/task-metrics.ts';
import { closeRecordConverters } from './record-converters.ts';
import { SerialExecutor } from './serial-executor.ts';
import { errorTrace, taskIdString } from './status-listener.ts';
import type { TaskRunnerOptions } from './task-runner-options.ts';
import { TaskTrouble } from './task-trouble.ts';

const NO_HEADERS: readonly Header[] = [];

/** Back-off before redelivering a batch after RetriableException, unless the task set one. */
const DEFAULT_RETRY_BACKOFF_MS = 1000;

/**
 * put([]) after this long without records. Kafka Connect's is its poll timeout; a few
 * hundred ms lets time-based rotation close files about when due, at the cost of a
 * no-op call a few times a second on an idle task.
 */
export const IDLE_PUT_INTERVAL_MS = 250;

export interface WorkerSinkTaskOptions extends TaskRunnerOptions<SinkTask> {
  /** Subscribed to the connector's topics; started and stopped by the task. */
  consumer: GroupConsumer;
  maxPollRecords: number;
  /** Closes the dead letter queue producer, if any, after the task stopped. */
  onClosed?: () => Promise<void>;
  /** sink-task-metrics and the task's error metrics (connect-metrics.ts). */
  metrics?: TaskMetrics;
  /**
   * End offsets of topic partitions, for the consumer lag metric (asked only when
   * metrics are scraped); without it the task shows no lag.
   */
  endOffsets?: EndOffsets;
  /** The consumer's client.id, the lag metric's client_id label. */
  consumerClientId?: string;
}

export class WorkerSinkTask {
  private readonly serial = new SerialExecutor();
  private assignment = new Map<string, TopicPartition>();
  private readonly currentOffsets = new Map<string, TopicPartitionOffset>();
  private readonly lastCommitted = new Map<string, number>();
  private readonly contextPaused = new Set<string>();
  private pendingSeeks = new Map<string, TopicPartitionOffset>();
  /**
   * Per partition, how many times its position was reset (seek, revocation): a batch
   * remembers the count it was fetched under and is dropped when it changed.
   */
  private readonly seekEpochs = new Map<string, number>();
  /** The delivery of the batch the consumer handed over last (it never rejects). */
  private handedOver: Promise<void> = Promise.resolve();
  private retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;
  private commitRequested = false;
  private paused: boolean;
  private stopping = false;
  private failed: unknown;
  private running = false;
  private cancelCommitTimer: (() => void) | null = null;
  private cancelIdleTimer: (() => void) | null = null;
  /** Clock time from which an idle put([]) is due: an interval after the last put. */
  private nextIdlePut = 0;
  private wakeSleep: (() => void) | null = null;
  /** A record's error context, for the errant record reporter (errors.tolerance=all). */
  private readonly contextOf = new WeakMap<object, ConsumedContext>();
  private stopped: Promise<void> | null = null;
  private taskStopped = false;
  /** Records handed to put, for tests and metrics. */
  recordsPut = 0;
  private readonly sinkMetrics: SinkTaskMetrics | null;
  /**
   * Per partition never committed by this task, the offset of its first record
   * delivered: where sink-record-active-count counts from until a commit.
   */
  private readonly firstDelivered = new Map<string, number>();

  private readonly trouble: TaskTrouble;

  constructor(private readonly o: WorkerSinkTaskOptions) {
    this.paused = o.targetState === 'PAUSED';
    // Every state this runner reports goes through the task's trouble, so a RUNNING
    // carries the detail the task reported (task-trouble.ts).
    this.trouble = new TaskTrouble(o.id, o.status);
    this.o = { ...o, status: this.trouble.listener };
    this.sinkMetrics = o.metrics?.sink ?? null;
    if (this.sinkMetrics !== null) {
      this.sinkMetrics.view = {
        partitionCount: () => this.assignment.size,
        activeRecords: () => this.activeRecords(),
      };
      if (o.endOffsets !== undefined)
        this.sinkMetrics.lag = new ConsumerLag(
          o.consumerClientId ?? `connector-consumer-${o.id.connector}-${o.id.task}`,
          o.endOffsets,
          () => this.currentOffsets.values(),
          o.clock,
        );
    }
  }

  /** Records delivered past the last commit, over the assigned partitions (scrape time). */
  private activeRecords(): number {
    let n = 0;
    for (const [key, current] of this.currentOffsets) {
      const from = this.lastCommitted.get(key) ?? this.firstDelivered.get(key);
      if (from !== undefined && current.offset > from) n += current.offset - from;
    }
    return n;
  }

  get id(): ConnectorTaskId {
    return this.o.id;
  }

  get isFailed(): boolean {
    return this.failed !== undefined;
  }

  private context(): SinkTaskContext {
    const self = this;
    const ctx: SinkTaskContext = {
      connectorName: this.o.id.connector,
      taskId: this.o.id.task,
      clock: this.o.clock,
      assignment: () => [...self.assignment.values()],
      pause(partitions) {
        for (const tp of partitions) self.contextPaused.add(topicPartitionKey(tp));
        self.o.consumer.pause(partitions);
      },
      resume(partitions) {
        for (const tp of partitions) self.contextPaused.delete(topicPartitionKey(tp));
        if (!self.paused) self.o.consumer.resume(partitions);
      },
      requestCommit() {
        // During a put, the commit follows it; otherwise (a sink whose writes finish
        // in the background) it is queued now rather than left to the interval.
        if (self.commitRequested) return;
        self.commitRequested = true;
        void self.serial.run(() => self.commitIfRequested()).catch((e: unknown) => self.fail(e));
      },
      offset(offsets) {
        for (const tpo of offsets) self.pendingSeeks.set(topicPartitionKey(tpo), tpo);
      },
      timeout(ms) {
        self.retryBackoffMs = ms;
      },
      reportTrouble(detail) {
        self.trouble.report(detail);
      },
      pluginMetrics: () => self.o.metrics?.plugin ?? noopPluginMetrics,
    };
    if (this.o.operator.toleratesAll) {
      return {
        ...ctx,
        errantRecordReporter: (record, error) => {
          const consumed = this.contextOf.get(record)?.consumed;
          return this.o.operator.report(
            {
              stage: 'TASK_PUT',
              className: this.o.taskClass,
              ...(consumed !== undefined ? { consumed } : {}),
            },
            error,
          );
        },
      };
    }
    return ctx;
  }

  async start(): Promise<void> {
    const { o } = this;
    try {
      this.taskStart = Promise.resolve()
        .then(() => o.task.start(o.taskConfig, this.context()))
        .finally(() => {
          this.taskStartSettled = true;
        });
      await this.taskStart;
      // Stopped (or abandoned) while starting: its stop() released everything.
      if (this.stopping) return;
      // The first join takes up to a session timeout when the previous owner of the
      // partitions died. The herder starting this task must not wait that long (it
      // would stall its own group membership), so the consumer joins in the background.
      this.running = true;
      o.consumer.start({
        onRevoking: (partitions) => this.serial.run(() => this.commitBeforeRebalance(partitions)),
        onAssigned: (partitions) =>
          this.serial.run(() => this.onAssignment(partitions)).catch((e: unknown) => this.fail(e)),
        onBatch: (batch) => this.onBatch(batch),
        onFatal: (e) => this.fail(e),
      });
    } catch (e) {
      if (this.stopping) {
        o.logger.warn({ err: e }, `${taskIdString(o.id)} failed to start while stopping`);
        return;
      }
      this.fail(e);
      return;
    }
    o.status.taskState(o.id, this.paused ? 'PAUSED' : 'RUNNING');
    if (this.paused) this.pauseAll();
    this.scheduleCommit();
    this.nextIdlePut = o.clock.now() + IDLE_PUT_INTERVAL_MS;
    this.scheduleIdlePut();
  }

  setTargetState(state: TargetState): void {
    if (this.failed !== undefined || this.stopping) return;
    const paused = state === 'PAUSED';
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) this.pauseAll();
    else {
      const resumable = [...this.assignment.values()].filter(
        (tp) => !this.contextPaused.has(topicPartitionKey(tp)),
      );
      this.o.consumer.resume(resumable);
    }
    this.o.status.taskState(this.o.id, paused ? 'PAUSED' : 'RUNNING');
  }

  private pauseAll(): void {
    this.o.consumer.pause([...this.assignment.values()]);
  }

  /**
   * Before the consumer rejoins: commit what the task says is done, so the partitions'
   * next owners start there. A failure only costs redelivery, so it is logged.
   */
  private async commitBeforeRebalance(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.failed !== undefined || this.closing !== null || this.taskStopped) return;
    try {
      await this.commit(partitions);
    } catch (e) {
      this.o.logger.warn(
        { err: e },
        `${taskIdString(this.o.id)} could not commit offsets before a rebalance; records after the last commit are delivered again`,
      );
    }
  }

  private async onAssignment(assigned: readonly TopicPartition[]): Promise<void> {
    if (this.failed !== undefined || this.closing !== null) return;
    const next = new Map<string, TopicPartition>();
    for (const tp of assigned) next.set(topicPartitionKey(tp), tp);
    const revoked = [...this.assignment.entries()]
      .filter(([k]) => !next.has(k))
      .map(([, tp]) => tp);
    const added = [...next.entries()].filter(([k]) => !this.assignment.has(k)).map(([, tp]) => tp);
    if (revoked.length > 0) {
      await this.o.task.close?.(revoked);
      for (const tp of revoked) {
        const key = topicPartitionKey(tp);
        this.bumpSeekEpoch(key);
        this.currentOffsets.delete(key);
        this.lastCommitted.delete(key);
        this.firstDelivered.delete(key);
        this.contextPaused.delete(key);
      }
    }
    this.assignment = next;
    if (added.length > 0) {
      await this.o.task.open?.(added);
      this.applySeeks();
    }
    if (this.paused) this.pauseAll();
    else {
      const contextPaused = added.filter((tp) => this.contextPaused.has(topicPartitionKey(tp)));
      if (contextPaused.length > 0) this.o.consumer.pause(contextPaused);
    }
  }

  /**
   * The consumer's batch callback. It hands the batch over and returns once the batch
   * before it is delivered, not this one: the consumer sends the next Fetch only when
   * this returns, so the Fetch's round trip overlaps the asynchronous part of this
   * batch's delivery, while at most one batch waits. (Conversion and a put that
   * completes synchronously run in the microtasks queued before this returns.)
   */
  private async onBatch(batch: FetchedBatch): Promise<void> {
    if (this.failed !== undefined || this.stopping) return;
    const key = topicPartitionKey({ topic: batch.topic, partition: batch.partition });
    const epoch = this.seekEpochs.get(key) ?? 0;
    const previous = this.handedOver;
    // Chained: this batch's chunks go to the task only after the previous batch's
    // last one, so records of a partition reach put in offset order.
    this.handedOver = previous.then(() => this.deliverBatch(batch, key, epoch));
    await previous;
  }

  /** Deliver a batch in chunks of max.poll.records; never rejects (failures fail the task). */
  private async deliverBatch(batch: FetchedBatch, key: string, epoch: number): Promise<void> {
    const messages = batch.records;
    for (let start = 0; start < messages.length; start += this.o.maxPollRecords) {
      if (this.failed !== undefined || this.stopping || (this.seekEpochs.get(key) ?? 0) !== epoch) {
        return;
      }
      const chunk =
        start === 0 && messages.length <= this.o.maxPollRecords
          ? messages
          : messages.slice(start, start + this.o.maxPollRecords);
      let delivered = false;
      try {
        delivered = await this.serial.run(() =>
          this.deliver(batch.topic, batch.partition, chunk, epoch),
        );
      } catch (e) {
        this.fail(e);
        return;
      }
      if (!delivered) return;
      // Let the event loop read the sockets between chunks: the next Fetch answer (sent
      // ahead by the consumer) is larger than what the kernel buffers for a socket
      // nobody reads, so the broker can finish sending it only while this thread reads.
      if (start + this.o.maxPollRecords < messages.length) await yieldToEventLoop();
    }
  }

  /**
   * Convert, transform and put one chunk; false when it was not delivered (a seek since
   * it was fetched, stop, partition not assigned).
   */
  private async deliver(
    topic: string,
    partition: number,
    messages: ConsumedRecord[],
    epoch: number,
  ): Promise<boolean> {
    const { o } = this;
    const key = topicPartitionKey({ topic, partition });
    if (
      this.failed !== undefined ||
      this.stopping ||
      this.closing !== null ||
      !this.assignment.has(key) ||
      (this.seekEpochs.get(key) ?? 0) !== epoch
    ) {
      return false;
    }
    // A seek requested for this partition invalidates what was fetched before it.
    if (this.pendingSeeks.has(key)) {
      this.applySeeks();
      return false;
    }
    this.sinkMetrics?.recordRead(messages.length);
    if (messages.length > 0 && !this.lastCommitted.has(key) && !this.firstDelivered.has(key)) {
      this.firstDelivered.set(key, messages[0]!.offset);
    }
    const records: SinkRecord[] = [];
    for (const message of messages) {
      const record = this.toSinkRecord(topic, partition, message);
      if (record !== null) records.push(record);
    }
    // Each batch, as Kafka records the active topic per record: after a topics/reset the
    // topic shows again as soon as records of it flow (the reporter writes it once).
    if (messages.length > 0) o.status.topicUsed?.(o.id.connector, topic);
    for (;;) {
      const putStart = o.clock.now();
      this.nextIdlePut = putStart + IDLE_PUT_INTERVAL_MS;
      try {
        await o.task.put(records);
        this.sinkMetrics?.recordPut(records.length, o.clock.now() - putStart);
        break;
      } catch (e) {
        if (errorKind(e) !== 'retriable') throw e;
        o.metrics?.errors.recordRetry();
        o.logger.warn(
          { err: e },
          `${taskIdString(o.id)} put failed with a retriable error; redelivering ${records.length} records in ${this.retryBackoffMs} ms`,
        );
        const backoff = this.retryBackoffMs;
        this.retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;
        if (!(await this.sleep(backoff))) return false;
      }
    }
    this.recordsPut += records.length;
    const last = messages[messages.length - 1]!;
    this.currentOffsets.set(key, { topic, partition, offset: last.offset + 1 });
    this.applySeeks();
    if (this.commitRequested) {
      this.commitRequested = false;
      await this.commit([...this.assignment.values()]);
    }
    return true;
  }

  /**
   * One converter call; only a failure goes through the tolerance operator, which runs
   * the converter again, so a retriable error gets a real retry.
   */
  private toConnect(
    stage: 'KEY_CONVERTER' | 'VALUE_CONVERTER',
    klass: string,
    converter: Converter,
    topic: string,
    bytes: Buffer | null,
    ctx: { consumed: ConsumedMessage },
  ): SchemaAndValue | typeof skipped {
    try {
      return converter.toConnectData(topic, bytes);
    } catch {
      return this.o.operator.execute(stage, klass, ctx, () =>
        converter.toConnectData(topic, bytes),
      );
    }
  }

  /**
   * One consumed message through the converters and transforms; null when a stage
   * dropped it or a tolerated error skipped it. This runs for every record: the
   * converters are called directly and go through the tolerance operator only when
   * they throw (which runs them again under its retry and tolerance rules), so the
   * common path allocates no closure, and the consumed message an error report
   * needs is made only when one asks for it (ConsumedContext).
   */
  private toSinkRecord(
    topic: string,
    partition: number,
    message: ConsumedRecord,
  ): SinkRecord | null {
    const { o } = this;
    const c = o.converters;
    const headers = message.headers;
    const ctx = new ConsumedContext(topic, partition, message);
    const keyData = this.toConnect('KEY_CONVERTER', c.keyClass, c.key, topic, message.key, ctx);
    if (keyData === skipped) return null;
    const valueData = this.toConnect(
      'VALUE_CONVERTER',
      c.valueClass,
      c.value,
      topic,
      message.value,
      ctx,
    );
    if (valueData === skipped) return null;
    const connectHeaders =
      headers.length === 0
        ? NO_HEADERS
        : o.operator.execute('HEADER_CONVERTER', c.headerClass, ctx, () =>
            headers.map((h): Header => c.header.toHeader(topic, h.key, h.value)),
          );
    if (connectHeaders === skipped) return null;
    const record: SinkRecord = {
      topic,
      kafkaPartition: partition,
      kafkaOffset: message.offset,
      keySchema: keyData.schema,
      key: keyData.value,
      valueSchema: valueData.schema,
      value: valueData.value,
      timestamp: message.timestamp,
      timestampType: 'CreateTime',
      headers: connectHeaders,
    };
    const transformed = o.transforms.apply(record, o.operator, ctx);
    if (transformed === null || transformed === skipped) return null;
    // Only the errant record reporter needs to find the consumed bytes again, and
    // makes them from the context only for a record it reports.
    if (o.operator.toleratesAll) this.contextOf.set(transformed, ctx);
    return transformed;
  }

  private applySeeks(): void {
    if (this.pendingSeeks.size === 0) return;
    const seeks = this.pendingSeeks;
    this.pendingSeeks = new Map();
    for (const [key, tpo] of seeks) {
      if (!this.assignment.has(key)) {
        this.o.logger.warn(
          `${taskIdString(this.o.id)} ignores a seek of ${key}: the partition is not assigned to it`,
        );
        continue;
      }
      this.o.consumer.seek(tpo, tpo.offset);
      this.bumpSeekEpoch(key);
      this.currentOffsets.set(key, {
        topic: tpo.topic,
        partition: tpo.partition,
        offset: tpo.offset,
      });
    }
  }

  /** Batches of the partition fetched before this point are not delivered. */
  private bumpSeekEpoch(key: string): void {
    this.seekEpochs.set(key, (this.seekEpochs.get(key) ?? 0) + 1);
  }

  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = this.o.timers.schedule(ms, () => {
        this.wakeSleep = null;
        resolve(!this.stopping);
      });
      this.wakeSleep = () => {
        cancel();
        resolve(false);
      };
    });
  }

  private scheduleIdlePut(): void {
    this.cancelIdleTimer = this.o.timers.schedule(IDLE_PUT_INTERVAL_MS, () => {
      this.cancelIdleTimer = null;
      const due = this.running && !this.paused && this.o.clock.now() >= this.nextIdlePut;
      void (due ? this.serial.run(() => this.putIdle()) : Promise.resolve())
        .catch((e: unknown) => this.fail(e))
        .finally(() => {
          if (!this.stopping && this.failed === undefined) this.scheduleIdlePut();
        });
    });
  }

  /** put([]) on a task that received nothing lately; runs inside the serial executor. */
  private async putIdle(): Promise<void> {
    const { o } = this;
    if (
      this.failed !== undefined ||
      this.stopping ||
      this.closing !== null ||
      this.paused ||
      o.clock.now() < this.nextIdlePut // records were put while this call waited
    ) {
      return;
    }
    this.nextIdlePut = o.clock.now() + IDLE_PUT_INTERVAL_MS;
    try {
      await o.task.put([]);
    } catch (e) {
      if (errorKind(e) !== 'retriable') throw e;
      o.logger.warn(
        { err: e },
        `${taskIdString(o.id)} put of no records failed with a retriable error; next try in ${this.retryBackoffMs} ms`,
      );
      this.nextIdlePut = o.clock.now() + this.retryBackoffMs;
      this.retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;
      return;
    }
    if (this.commitRequested) {
      this.commitRequested = false;
      await this.commit([...this.assignment.values()]);
    }
  }

  private async commitIfRequested(): Promise<void> {
    if (
      !this.commitRequested ||
      !this.running ||
      this.closing !== null ||
      this.failed !== undefined
    )
      return;
    this.commitRequested = false;
    await this.commit([...this.assignment.values()]);
  }

  private scheduleCommit(): void {
    this.cancelCommitTimer = this.o.timers.schedule(this.o.offsetFlushIntervalMs, () => {
      this.cancelCommitTimer = null;
      void this.serial
        .run(() => this.commit([...this.assignment.values()]))
        .catch((e: unknown) => this.fail(e))
        .finally(() => {
          if (!this.stopping && this.failed === undefined) this.scheduleCommit();
        });
    });
  }

  /** preCommit and commit the partitions given (assigned ones); runs inside the serial executor. */
  private async commit(partitions: readonly TopicPartition[]): Promise<void> {
    const { o } = this;
    // Nothing assigned (before the first assignment, between two): nothing to commit,
    // and the task is not asked (Kafka asks preCommit about assigned partitions only).
    if (this.taskStopped || partitions.length === 0) return;
    const current = partitions
      .map((tp) => this.currentOffsets.get(topicPartitionKey(tp)))
      .filter((x): x is TopicPartitionOffset => x !== undefined);
    if (current.length === 0 && o.task.preCommit === undefined) return;
    // Tolerated records' DLQ copies must be durable before offsets move past them.
    await o.operator.awaitReports();
    let offered: readonly TopicPartitionOffset[];
    if (o.task.preCommit !== undefined) {
      offered = await o.task.preCommit(current);
    } else {
      await o.task.flush?.(current);
      offered = current;
    }
    const toCommit: TopicPartitionOffset[] = [];
    for (const tpo of offered) {
      const key = topicPartitionKey(tpo);
      const cur = this.currentOffsets.get(key);
      if (!this.assignment.has(key)) {
        o.logger.warn(
          `${taskIdString(o.id)} preCommit returned ${key}, which is not assigned to the task; not committed`,
        );
        continue;
      }
      if (cur === undefined || tpo.offset > cur.offset) {
        o.logger.warn(
          `${taskIdString(o.id)} preCommit returned offset ${tpo.offset} for ${key}, beyond the ${cur?.offset ?? 'no'} records put; not committed`,
        );
        continue;
      }
      if (this.lastCommitted.get(key) === tpo.offset) continue;
      toCommit.push({ topic: tpo.topic, partition: tpo.partition, offset: tpo.offset });
    }
    if (toCommit.length === 0) return;
    const commitStart = o.clock.now();
    try {
      await o.consumer.commit(toCommit);
    } catch (e) {
      const ms = o.clock.now() - commitStart;
      // The group is rebalancing: the commit before the rejoin tries again.
      if (!(e instanceof CommitFailedError)) {
        this.sinkMetrics?.recordOffsetCommitFailed(ms);
        throw e;
      }
      this.sinkMetrics?.recordOffsetCommitSkipped(ms);
      o.logger.warn(`${taskIdString(o.id)} ${e.message}`);
      return;
    }
    this.sinkMetrics?.recordOffsetCommitCompleted(o.clock.now() - commitStart);
    for (const t of toCommit) {
      const key = topicPartitionKey(t);
      this.lastCommitted.set(key, t.offset);
      this.firstDelivered.delete(key);
    }
  }

  /** Run one commit now (tests and REST use the timer's path otherwise). */
  commitNow(): Promise<void> {
    return this.serial.run(() => this.commit([...this.assignment.values()]));
  }

  private fail(error: unknown): void {
    if (this.failed !== undefined || this.stopping) return;
    this.failed = error;
    this.o.logger.error({ err: error }, `${taskIdString(this.o.id)} failed`);
    this.o.status.taskState(this.o.id, 'FAILED', errorTrace(error));
    this.wakeSleep?.();
    // Release everything outside the batch callback that reported the failure.
    setImmediate(() => void this.close(false));
  }

  async stop(): Promise<void> {
    if (this.stopped === null) {
      const wasFailed = this.failed !== undefined;
      this.stopping = true;
      this.wakeSleep?.();
      this.stopped = this.close(!wasFailed).then(() => {
        if (!wasFailed) this.o.status.taskState(this.o.id, 'UNASSIGNED');
      });
    }
    return this.stopped;
  }

  private closing: Promise<void> | null = null;
  /** task.start in progress or settled; null until it is called. */
  private taskStart: Promise<void> | null = null;
  private taskStartSettled = false;

  private close(commit: boolean): Promise<void> {
    this.closing ??= this.doClose(commit);
    return this.closing;
  }

  private async doClose(commit: boolean): Promise<void> {
    const { o } = this;
    this.cancelCommitTimer?.();
    this.cancelIdleTimer?.();
    const start = this.taskStart;
    if (start === null || !this.taskStartSettled) {
      // See the header: release ours now, stop the task once its start returns.
      if (start !== null) {
        o.logger.warn(
          `${taskIdString(o.id)} is stopped while its start() has not returned; its clients are closed now and its stop() is called once start() returns`,
        );
        this.taskStopped = true;
        void start
          .catch(() => undefined)
          .then(() => o.task.stop())
          .catch((e: unknown) => o.logger.error({ err: e }, `${taskIdString(o.id)} stop() failed`));
      }
      await this.releaseClients();
      return;
    }
    // The last commit runs while the consumer is still a group member (a commit after
    // leaving the group is refused). `stopping` makes batches in progress end after
    // their current chunk, and new ones deliver nothing.
    await this.serial.run(async () => {
      const all = [...this.assignment.values()];
      if (commit && this.failed === undefined && this.running) {
        try {
          await this.commit(all);
        } catch (e) {
          o.logger.error({ err: e }, `${taskIdString(o.id)} final offset commit failed`);
        }
      }
      try {
        if (all.length > 0) await o.task.close?.(all);
      } catch (e) {
        o.logger.error({ err: e }, `${taskIdString(o.id)} close() failed`);
      }
      this.taskStopped = true;
      try {
        await o.task.stop();
      } catch (e) {
        o.logger.error({ err: e }, `${taskIdString(o.id)} stop() failed`);
      }
    });
    await this.releaseClients();
  }

  private async releaseClients(): Promise<void> {
    const { o } = this;
    try {
      await o.consumer.stop();
    } catch (e) {
      o.logger.warn({ err: e }, `${taskIdString(o.id)} consumer stop failed`);
    }
    try {
      await o.onClosed?.();
    } catch (e) {
      o.logger.warn({ err: e }, `${taskIdString(o.id)} dead letter queue producer close failed`);
    }
    o.transforms.close();
    closeRecordConverters(o.converters);
  }
}

/**
 * The error context of one record: its consumed message (for the log and the dead
 * letter queue), made from the fetched record on first use. Most records never fail,
 * so most never make it.
 */
class ConsumedContext {
  private message: ConsumedMessage | undefined;

  constructor(
    private readonly topic: string,
    private readonly partition: number,
    private readonly record: ConsumedRecord,
  ) {}

  get consumed(): ConsumedMessage {
    const r = this.record;
    this.message ??= {
      topic: this.topic,
      partition: this.partition,
      offset: r.offset,
      timestamp: r.timestamp,
      key: r.key,
      value: r.value,
      headers: r.headers,
    };
    return this.message;
  }
}

/** Resolves after the event loop has polled for I/O once. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
