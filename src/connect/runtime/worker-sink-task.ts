/**
 * WorkerSinkTask: runs one sink task (Kafka Connect's class of the same name).
 *
 * Data path: a kafkajs consumer in group `connect-<connector>` (autoCommit off) on the
 * connector's `topics` or `topics.regex` -> per fetched batch, in chunks of at most
 * `max.poll.records`: key, value and header converters -> transforms -> task.put.
 * A RetriableException from put redelivers the same records after context.timeout(ms)
 * (or a default back-off); other errors fail the task. Conversion and transform errors
 * follow errors.tolerance (skip, log, dead letter queue); the errant record reporter is
 * offered to the task when errors.tolerance=all.
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
 * through one SerialExecutor, so they never overlap. Rebalance: kafkajs reports the
 * new assignment on GROUP_JOIN (it has no revocation callback); before any record of
 * the new generation is put, partitions no longer assigned get a commit and close(),
 * new ones open(). A seek from context.offset() is applied before the next put.
 *
 * Stop: the batch in progress finishes its current chunk, then a last commit (while
 * the consumer is still a group member), close() of every assigned partition,
 * task.stop(), consumer.stop() and disconnect (leaving the group). Nothing is called
 * on the task after its stop(). Crash: records after the last commit are delivered
 * again.
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type {
  Header,
  SinkRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../api/connect-record.ts';
import { topicPartitionKey } from '../api/connect-record.ts';
import type { TaskConfig } from '../api/connector.ts';
import { errorKind } from '../api/errors.ts';
import type { SinkTask, SinkTaskContext } from '../api/sink-task.ts';
import type { ConsumedMessage } from '../errors/processing-context.ts';
import {
  type RetryWithToleranceOperator,
  skipped,
} from '../errors/retry-with-tolerance-operator.ts';
import type { ConnectorTaskId, TargetState } from '../herder/herder.ts';
import { closeRecordConverters, type RecordConverters } from './record-converters.ts';
import { SerialExecutor } from './serial-executor.ts';
import { errorTrace, type StatusListener, taskIdString } from './status-listener.ts';
import type { TransformationChain } from './transformation-chain.ts';

const NO_HEADERS: readonly Header[] = [];

/** How often a sink whose topics do not exist yet checks again. */
const MISSING_TOPIC_RETRY_MS = 500;

/** Back-off before redelivering a batch after RetriableException, unless the task set one. */
const DEFAULT_RETRY_BACKOFF_MS = 1000;

export interface SinkSubscription {
  topics: string[];
  /** Set instead of topics for topics.regex (resolved when the consumer subscribes). */
  regex: RegExp | null;
  fromBeginning: boolean;
}

export interface WorkerSinkTaskOptions {
  id: ConnectorTaskId;
  task: SinkTask;
  taskClass: string;
  taskConfig: TaskConfig;
  targetState: TargetState;
  converters: RecordConverters;
  transforms: TransformationChain;
  operator: RetryWithToleranceOperator;
  consumer: Consumer;
  subscription: SinkSubscription;
  maxPollRecords: number;
  status: StatusListener;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  offsetFlushIntervalMs: number;
  gracefulShutdownMs: number;
  /** Closes the dead letter queue producer, if any, after the task stopped. */
  onClosed?: () => Promise<void>;
}

export class WorkerSinkTask {
  private readonly serial = new SerialExecutor();
  private assignment = new Map<string, TopicPartition>();
  private readonly currentOffsets = new Map<string, TopicPartitionOffset>();
  private readonly lastCommitted = new Map<string, number>();
  private readonly contextPaused = new Set<string>();
  private pendingSeeks = new Map<string, TopicPartitionOffset>();
  private retryBackoffMs = DEFAULT_RETRY_BACKOFF_MS;
  private commitRequested = false;
  private paused: boolean;
  private stopping = false;
  private failed: unknown;
  private running = false;
  private cancelCommitTimer: (() => void) | null = null;
  private wakeSleep: (() => void) | null = null;
  private readonly consumedOf = new WeakMap<object, ConsumedMessage>();
  private stopped: Promise<void> | null = null;
  private taskStopped = false;
  /** Records handed to put, for tests and metrics. */
  recordsPut = 0;

  constructor(private readonly o: WorkerSinkTaskOptions) {
    this.paused = o.targetState === 'PAUSED';
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
        self.o.consumer.pause(groupByTopic(partitions));
      },
      resume(partitions) {
        for (const tp of partitions) self.contextPaused.delete(topicPartitionKey(tp));
        if (!self.paused) self.o.consumer.resume(groupByTopic(partitions));
      },
      requestCommit() {
        self.commitRequested = true;
      },
      offset(offsets) {
        for (const tpo of offsets) self.pendingSeeks.set(topicPartitionKey(tpo), tpo);
      },
      timeout(ms) {
        self.retryBackoffMs = ms;
      },
    };
    if (this.o.operator.toleratesAll) {
      return {
        ...ctx,
        errantRecordReporter: (record, error) =>
          this.o.operator.report(
            {
              stage: 'TASK_PUT',
              className: this.o.taskClass,
              ...(this.consumedOf.has(record) ? { consumed: this.consumedOf.get(record) } : {}),
            },
            error,
          ),
      };
    }
    return ctx;
  }

  async start(): Promise<void> {
    const { o } = this;
    try {
      await o.task.start(o.taskConfig, this.context());
      o.consumer.on(o.consumer.events.GROUP_JOIN, (event) => {
        const assigned = event.payload.memberAssignment as Record<string, number[]>;
        void this.serial.run(() => this.onAssignment(assigned)).catch((e: unknown) => this.fail(e));
      });
      o.consumer.on(o.consumer.events.CRASH, (event) => {
        if (!event.payload.restart) this.fail(event.payload.error);
      });
      await o.consumer.connect();
      const { topics, regex, fromBeginning } = o.subscription;
      await this.subscribe(regex !== null ? [regex] : topics, fromBeginning);
      if (this.stopping) return;
      // kafkajs's run() resolves only after the first group join, which takes up to a
      // session timeout when the previous owner of the partitions died. The herder
      // starting this task must not wait that long (it would stall its own group
      // membership), so the join completes in the background; partitions are opened
      // on GROUP_JOIN as usual.
      this.running = true;
      o.consumer
        .run({
          autoCommit: false,
          partitionsConsumedConcurrently: 1,
          eachBatch: (payload) => this.onBatch(payload),
        })
        .catch((e: unknown) => {
          if (!this.stopping) this.fail(e);
        });
    } catch (e) {
      this.fail(e);
      return;
    }
    o.status.taskState(o.id, this.paused ? 'PAUSED' : 'RUNNING');
    if (this.paused) this.pauseAll();
    this.scheduleCommit();
  }

  /**
   * Subscribe, waiting for topics that do not exist yet (a source may be about to
   * create them, or auto-creation is off): Kafka's consumer waits for them too,
   * whereas kafkajs's subscribe fails on an unknown topic.
   */
  private async subscribe(topics: Array<string | RegExp>, fromBeginning: boolean): Promise<void> {
    for (;;) {
      try {
        await this.o.consumer.subscribe({ topics, fromBeginning });
        return;
      } catch (e) {
        if ((e as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw e;
        this.o.logger.warn(
          `${taskIdString(this.o.id)} waits for topics ${topics.join(', ')} to exist`,
        );
        if (!(await this.sleep(MISSING_TOPIC_RETRY_MS))) return;
      }
    }
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
      this.o.consumer.resume(groupByTopic(resumable));
    }
    this.o.status.taskState(this.o.id, paused ? 'PAUSED' : 'RUNNING');
  }

  private pauseAll(): void {
    const topics =
      this.o.subscription.regex !== null
        ? [...new Set([...this.assignment.values()].map((tp) => tp.topic))]
        : this.o.subscription.topics;
    this.o.consumer.pause(topics.map((topic) => ({ topic })));
  }

  private async onAssignment(assigned: Record<string, number[]>): Promise<void> {
    if (this.failed !== undefined || this.closing !== null) return;
    const next = new Map<string, TopicPartition>();
    for (const [topic, partitions] of Object.entries(assigned)) {
      for (const partition of partitions)
        next.set(topicPartitionKey({ topic, partition }), { topic, partition });
    }
    const revoked = [...this.assignment.entries()]
      .filter(([k]) => !next.has(k))
      .map(([, tp]) => tp);
    const added = [...next.entries()].filter(([k]) => !this.assignment.has(k)).map(([, tp]) => tp);
    if (revoked.length > 0) {
      await this.commit(revoked);
      await this.o.task.close?.(revoked);
      for (const tp of revoked) {
        const key = topicPartitionKey(tp);
        this.currentOffsets.delete(key);
        this.lastCommitted.delete(key);
        this.contextPaused.delete(key);
      }
    }
    this.assignment = next;
    for (const topic of new Set(added.map((tp) => tp.topic)))
      this.o.status.topicUsed?.(this.o.id.connector, topic);
    if (added.length > 0) {
      await this.o.task.open?.(added);
      this.applySeeks();
    }
    if (this.paused) this.pauseAll();
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { o } = this;
    const messages = batch.messages;
    for (let start = 0; start < messages.length; start += o.maxPollRecords) {
      if (!payload.isRunning() || payload.isStale() || this.failed !== undefined || this.stopping)
        return;
      const chunk = messages.slice(start, start + o.maxPollRecords);
      let delivered = false;
      try {
        delivered = await this.serial.run(() => this.deliver(batch.topic, batch.partition, chunk));
      } catch (e) {
        this.fail(e);
        return;
      }
      if (!delivered) return;
      await payload.heartbeat();
    }
  }

  /** Convert, transform and put one chunk; false when it was not delivered (seek, stop). */
  private async deliver(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
  ): Promise<boolean> {
    const { o } = this;
    const key = topicPartitionKey({ topic, partition });
    if (
      this.failed !== undefined ||
      this.stopping ||
      this.closing !== null ||
      !this.assignment.has(key)
    ) {
      return false;
    }
    // A seek requested for this partition invalidates what was fetched before it.
    if (this.pendingSeeks.has(key)) {
      this.applySeeks();
      return false;
    }
    const records: SinkRecord[] = [];
    for (const message of messages) {
      const record = this.toSinkRecord(topic, partition, message);
      if (record !== null) records.push(record);
    }
    for (;;) {
      try {
        await o.task.put(records);
        break;
      } catch (e) {
        if (errorKind(e) !== 'retriable') throw e;
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
    const last = messages[messages.length - 1] as KafkaMessage;
    this.currentOffsets.set(key, { topic, partition, offset: Number(last.offset) + 1 });
    this.applySeeks();
    if (this.commitRequested) {
      this.commitRequested = false;
      await this.commit([...this.assignment.values()]);
    }
    return true;
  }

  private toSinkRecord(topic: string, partition: number, message: KafkaMessage): SinkRecord | null {
    const { o } = this;
    const c = o.converters;
    const headers: Array<{ key: string; value: Buffer | null }> = [];
    for (const [k, v] of Object.entries(message.headers ?? {})) {
      for (const one of Array.isArray(v) ? v : [v]) {
        if (one === undefined) continue;
        headers.push({
          key: k,
          value: one === null ? null : Buffer.isBuffer(one) ? one : Buffer.from(one),
        });
      }
    }
    const consumed: ConsumedMessage = {
      topic,
      partition,
      offset: Number(message.offset),
      timestamp: Number(message.timestamp),
      key: message.key ?? null,
      value: message.value ?? null,
      headers,
    };
    const ctx = { consumed };
    const keyData = o.operator.execute('KEY_CONVERTER', c.keyClass, ctx, () =>
      c.key.toConnectData(topic, consumed.key),
    );
    if (keyData === skipped) return null;
    const valueData = o.operator.execute('VALUE_CONVERTER', c.valueClass, ctx, () =>
      c.value.toConnectData(topic, consumed.value),
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
      kafkaOffset: consumed.offset,
      keySchema: keyData.schema,
      key: keyData.value,
      valueSchema: valueData.schema,
      value: valueData.value,
      timestamp: consumed.timestamp,
      timestampType: 'CreateTime',
      headers: connectHeaders,
    };
    const transformed = o.transforms.apply(record, o.operator, ctx);
    if (transformed === null || transformed === skipped) return null;
    // Only the errant record reporter needs to find the consumed bytes again.
    if (o.operator.toleratesAll) this.consumedOf.set(transformed, consumed);
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
      this.o.consumer.seek({
        topic: tpo.topic,
        partition: tpo.partition,
        offset: String(tpo.offset),
      });
      this.currentOffsets.set(key, {
        topic: tpo.topic,
        partition: tpo.partition,
        offset: tpo.offset,
      });
    }
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
    if (this.taskStopped) return;
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
    await o.consumer.commitOffsets(
      toCommit.map((t) => ({
        topic: t.topic,
        partition: t.partition,
        offset: String(t.offset),
        ...(t.metadata !== undefined ? { metadata: t.metadata } : {}),
      })),
    );
    for (const t of toCommit) this.lastCommitted.set(topicPartitionKey(t), t.offset);
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

  private close(commit: boolean): Promise<void> {
    this.closing ??= this.doClose(commit);
    return this.closing;
  }

  private async doClose(commit: boolean): Promise<void> {
    const { o } = this;
    this.cancelCommitTimer?.();
    // The last commit runs while the consumer is still a group member (kafkajs refuses
    // commits after consumer.stop()). `stopping` makes batches in progress end after
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
    if (this.running) {
      try {
        await o.consumer.stop();
      } catch (e) {
        o.logger.warn({ err: e }, `${taskIdString(o.id)} consumer stop failed`);
      }
    }
    try {
      await o.consumer.disconnect();
    } catch (e) {
      o.logger.warn({ err: e }, `${taskIdString(o.id)} consumer disconnect failed`);
    }
    await o.onClosed?.();
    o.transforms.close();
    closeRecordConverters(o.converters);
  }
}

function groupByTopic(
  partitions: readonly TopicPartition[],
): Array<{ topic: string; partitions: number[] }> {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) {
    const list = byTopic.get(tp.topic) ?? [];
    list.push(tp.partition);
    byTopic.set(tp.topic, list);
  }
  return [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps }));
}
