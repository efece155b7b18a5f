/**
 * WorkerSourceTask: runs one source task (Kafka Connect's class of the same name).
 *
 * The loop (one owner: `run`, started by `start`, ended by `stop`):
 *   poll -> per record: submit to SubmittedRecords -> transforms -> key, value and
 *   header converters -> pending queue -> the producer (source-producer.ts), in
 *   requests of up to max.request.size, up to max.in.flight.requests.per.connection of
 *   them outstanding (records polled meanwhile wait in the queue: that is where batching
 *   comes from) -> on acknowledgement, in send order: ack the submitted records and call
 *   task.commitRecord.
 * Back-pressure: while the unacknowledged bytes exceed `buffer.memory`, or a full
 * request waits for a free slot, the loop does not poll; it waits for a request in
 * flight to settle.
 *
 * Offset commit (every offset.flush.interval.ms, and once more when stopping): the
 * committable offsets of SubmittedRecords (never past the first unacknowledged record
 * of a source partition) go through the OffsetStorageWriter to the offset store; once
 * that write is durable, task.commit(). A write slower than offset.flush.timeout.ms is
 * abandoned (its offsets return to the writer for the next commit). Commits never
 * overlap.
 *
 * Failure: an error from poll (other than RetriableException, which is retried after
 * a back-off), a failed send, or an intolerable conversion/transform error fails the
 * task (state FAILED with the trace). Offsets of acknowledged records are still
 * committed, then the task is stopped. Crash: records sent but not committed are sent
 * again after restart (at-least-once).
 *
 * Stop: the loop ends after the poll in progress settles (the contract has polls end
 * within about a second); if that takes longer than task.shutdown.graceful.timeout.ms
 * the task's stop() is called to end it. Outstanding records are awaited for up to
 * offset.flush.timeout.ms, offsets committed, then task.stop(), then the producer is
 * closed. Nothing is called on the task after its stop() settled.
 * Exactly-once (KIP-618, when the worker gives `exactlyOnce`): the producer is
 * transactional. Before it registers, the herder fences the connector's earlier task
 * generations (zombie fencing); after, it checks that this task is still current and
 * assigned. Records go out inside a transaction, and where source-transactions.ts
 * puts a boundary, the rest of the polled records are handed to the producer, the
 * offsets of every record of the transaction are sent after them to the offsets topic
 * (the connector's own offsets.storage.topic, else the worker's) by the same producer
 * (without waiting for the records' acknowledgements: as in Kafka, the commit
 * succeeds only if every send of the transaction did), and the transaction commits:
 * records and the offsets covering them become visible together or not at all. No
 * periodic offset commit runs; commitRecord follows each commit, task.commit() too, at
 * most once per offset.flush.interval.ms (commits within an interval share one call,
 * made at its end, and at once at pause and stop). A commit at the end of a batch is
 * not waited for before the next poll: the loop polls, transforms and converts the
 * next batch while the commit is in flight, and hands those records to the producer
 * (in the next transaction) only once the commit is answered, so no record of one
 * transaction is written before the previous one ended. A failed send or commit fails
 * the task (whatever errors.tolerance says, as in Kafka: tolerance covers conversion
 * and transforms); its open transaction is aborted, and records converted for the
 * next transaction are dropped unsent.
 *
 * Stop while task.start has not returned (the worker stops or abandons a task stuck
 * in start): the producer, transforms and converters are released at once and stop()
 * resolves; the task's own stop() is called when its start returns, never during it
 * (calls on a task never overlap), and nothing else is called on it.
 */
import type { Admin } from 'kafkajs';
import type { RecordHeader } from '../../protocol/record-batch.ts';
import type { SourceRecord } from '../api/connect-record.ts';
import { ConnectException, errorKind } from '../api/errors.ts';
import type { OffsetStorageReader } from '../api/offset-storage-reader.ts';
import { noopPluginMetrics } from '../api/plugin-metrics.ts';
import type {
  RecordMetadata,
  SourceTask,
  SourceTaskContext,
  TransactionContext,
} from '../api/source-task.ts';
import { skipped } from '../errors/retry-with-tolerance-operator.ts';
import type { ConnectorTaskId, TargetState } from '../herder/herder.ts';
import type { TaskMetrics } from '../metrics/connect-metrics.ts';
import type { SourceTaskMetrics } from '../metrics/task-metrics.ts';
import { offsetValue } from './offset-keys.ts';
import type { OffsetStorageWriter } from './offset-storage-writer.ts';
import { closeRecordConverters } from './record-converters.ts';
import type {
  ProducedRecord,
  SourceProducer,
  TransactionalSourceProducer,
} from './source-producer.ts';
import type { TransactionAction, TransactionBoundaries } from './source-transactions.ts';
import { errorTrace, taskIdString } from './status-listener.ts';
import { type SubmittedRecord, SubmittedRecords } from './submitted-records.ts';
import type { TaskRunnerOptions } from './task-runner-options.ts';
import { TaskTrouble } from './task-trouble.ts';
import type { TopicCreation } from './topic-creation.ts';

const NO_HEADERS: readonly RecordHeader[] = [];

/**
 * Exactly-once: records converted in one go while a commit is in flight (about half a
 * millisecond of JSON conversion), so its answers are handled between slices.
 */
const AHEAD_SLICE = 128;

/** Back-off after a RetriableException from poll (Kafka Connect just polls again). */
const POLL_RETRY_BACKOFF_MS = 100;

export interface WorkerSourceTaskOptions extends TaskRunnerOptions<SourceTask> {
  producer: SourceProducer;
  offsetReader: OffsetStorageReader;
  offsetWriter: OffsetStorageWriter;
  topicCreation: TopicCreation | null;
  admin: Admin | null;
  offsetFlushTimeoutMs: number;
  bufferMemory: number;
  maxRequestBytes: number;
  /** Set when the task runs exactly-once (see the header). */
  exactlyOnce?: ExactlyOnceSetup;
  /** source-task-metrics and friends (GET /metrics). */
  metrics?: TaskMetrics;
  /** After the producer closed: gives the offset store lease back (connector-offset-stores.ts). */
  onClosed?: () => Promise<void>;
  /** The worker's bootstrap.servers, shown to the task (SourceTaskContext.bootstrapServers). */
  bootstrapServers?: readonly string[];
  /**
   * Shown as the trace of the task's RUNNING status from the start: its connector
   * required exactly-once and the task runs without it (exactly-once.ts says why).
   */
  deliveryTrouble?: string;
}

export interface ExactlyOnceSetup {
  /** The task's producer (the same object as `producer`), transactional. */
  producer: TransactionalSourceProducer;
  transactionalId: string;
  boundaries: TransactionBoundaries;
  /**
   * Where the offsets go, in the transactions: the connector's offsets.storage.topic,
   * else the worker's offset.storage.topic.
   */
  offsetsTopic: string;
  /**
   * With a connector offsets topic, after each commit: the committed offsets copied to
   * the worker's topic, the fallback of reads (connector-offset-backing-store.ts).
   */
  copyOffsetsToWorker?(entries: ReadonlyMap<string, string>): void;
  /** Zombie fencing of the connector's earlier task generations, before the producer registers. */
  beforeProducerInit(): Promise<void>;
  /** Throws when this task's generation is not current or it is no longer assigned here. */
  afterProducerInit(): Promise<void>;
}

/**
 * A converted record waiting for (or in) a produce request: the producer's record
 * itself. Exactly-once: record and submitted are null for an offsets record of the
 * transaction (it goes behind the transaction's records, in their last request when
 * it fits).
 */
interface Pending extends ProducedRecord {
  readonly record: SourceRecord | null;
  readonly submitted: SubmittedRecord | null;
  readonly bytes: number;
}

export class WorkerSourceTask {
  private readonly submitted: SubmittedRecords;
  private pending: Pending[] = [];
  private outstandingBytes = 0;
  /** Bytes converted and not yet handed to the producer. */
  private pendingBytes = 0;
  /** Sends started and not yet settled (at most producer.maxInFlight). */
  private inFlight = 0;
  /** Settles once the latest send has been handed to the producer: keeps send order. */
  private sendOrder: Promise<void> = Promise.resolve();
  /** Settles once the latest send's acknowledgements have been processed. */
  private lastSettled: Promise<void> = Promise.resolve();
  private stopping = false;
  private paused: boolean;
  private failed: unknown;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private cancelCommitTimer: (() => void) | null = null;
  private committing: Promise<void> | null = null;
  private taskStopped = false;
  /** Exactly-once: whether a transaction is open. */
  private inTransaction = false;
  /** Exactly-once: the latest record per source partition (by key) of the open transaction. */
  private txnOffsets = new Map<string, SubmittedRecord>();
  /**
   * Exactly-once: records handed to the producer since the last transaction ended
   * (transaction-size); taken when the next ends, as the offsets are, so records
   * converted ahead of a commit count in the transaction after it.
   */
  private txnRecords = 0;
  /** Exactly-once: commitRecord calls held until the transaction commits (two arrays, no object per record). */
  private heldRecords: SourceRecord[] = [];
  private heldMetadata: Array<RecordMetadata | null> = [];
  /**
   * Exactly-once: the commit of the previous transaction while it is in flight (the
   * loop polls and converts the next batch meanwhile); null when none is.
   */
  private ending: Promise<void> | null = null;
  /** Exactly-once: records converted while `ending`, for the next transaction (not sent yet). */
  private nextPending: Pending[] = [];
  private nextPendingBytes = 0;
  /** Exactly-once: commitRecord calls of records dropped while `ending`, for the next transaction. */
  private nextHeld: SourceRecord[] = [];
  /**
   * Exactly-once: task.commit() after transactions, at most once per
   * offset.flush.interval.ms (the cadence of at-least-once commits); one runs at a
   * time, one more may wait, a timer holds the next until its interval is over.
   */
  private taskCommits: Promise<void> = Promise.resolve();
  private taskCommitQueued = false;
  private lastTaskCommit = Number.NEGATIVE_INFINITY;
  private cancelTaskCommitTimer: (() => void) | null = null;
  private readonly transactionContext: TransactionContext | null;
  private readonly m: SourceTaskMetrics | null;

  private readonly trouble: TaskTrouble;

  constructor(private readonly o: WorkerSourceTaskOptions) {
    this.submitted = new SubmittedRecords(o.id.connector);
    this.paused = o.targetState === 'PAUSED';
    // Every state this runner reports goes through the task's trouble, so a RUNNING
    // carries the detail the task reported (task-trouble.ts).
    this.trouble = new TaskTrouble(o.id, o.status);
    if (o.deliveryTrouble !== undefined) this.trouble.report(o.deliveryTrouble);
    this.o = { ...o, status: this.trouble.listener };
    this.transactionContext = o.exactlyOnce?.boundaries.context() ?? null;
    this.m = o.metrics?.source ?? null;
    if (this.m !== null) this.m.view = { activeRecords: () => this.submitted.unacknowledged };
    if (o.exactlyOnce !== undefined) this.m?.trackTransactions();
  }

  /** What the task sees of the runtime (source-task.ts). */
  private context(): SourceTaskContext {
    const { o } = this;
    return {
      connectorName: o.id.connector,
      taskId: o.id.task,
      offsetStorageReader: o.offsetReader,
      clock: o.clock,
      // A task clearing its trouble leaves the delivery one standing.
      reportTrouble: (detail) => this.trouble.report(detail || (o.deliveryTrouble ?? null)),
      transactionContext: this.transactionContext,
      pluginMetrics: () => o.metrics?.plugin ?? noopPluginMetrics,
      ...(o.bootstrapServers !== undefined ? { bootstrapServers: o.bootstrapServers } : {}),
      topicCreationOverride: (topic, configs) => {
        // Without topic creation the runtime creates no topic to apply it to.
        if (o.topicCreation === null || o.topicCreation.override(topic, configs)) return;
        o.logger.warn(
          `${taskIdString(o.id)} topic configs for ${topic} came after its first record; the topic is left as it is`,
        );
      },
    };
  }

  get id(): ConnectorTaskId {
    return this.o.id;
  }

  /** Start the task and its loop; resolves once task.start settled (FAILED on error). */
  async start(): Promise<void> {
    const { o } = this;
    try {
      const eo = o.exactlyOnce;
      await eo?.beforeProducerInit();
      await o.producer.connect();
      await eo?.afterProducerInit();
      if (eo !== undefined) {
        o.logger.info(
          `${taskIdString(o.id)} runs exactly-once: transactional.id ${eo.transactionalId}, transaction.boundary=${eo.boundaries.boundary}`,
        );
      }
      // Stopped while connecting: close() released the producer; the task never starts.
      if (this.stopping) return;
      this.taskStart = Promise.resolve()
        .then(() => o.task.start(o.taskConfig, this.context()))
        .finally(() => {
          this.taskStartSettled = true;
        });
      await this.taskStart;
    } catch (e) {
      if (this.stopping) {
        o.logger.warn({ err: e }, `${taskIdString(o.id)} failed to start while stopping`);
        return;
      }
      this.fail(e);
      await this.close();
      return;
    }
    // Stopped (or abandoned) while starting: its stop() released everything.
    if (this.stopping) return;
    o.status.taskState(o.id, this.paused ? 'PAUSED' : 'RUNNING');
    if (o.exactlyOnce === undefined) this.scheduleCommit();
    this.loop = this.run();
  }

  setTargetState(state: TargetState): void {
    if (this.failed !== undefined || this.stopping) return;
    const paused = state === 'PAUSED';
    if (paused === this.paused) return;
    this.paused = paused;
    this.o.status.taskState(this.o.id, paused ? 'PAUSED' : 'RUNNING');
    this.signal();
  }

  private signal(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private waitForSignal(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = ms === undefined ? () => {} : this.o.timers.schedule(ms, () => this.signal());
      this.wake = () => {
        cancel();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    const { o } = this;
    try {
      while (!this.stopping && this.failed === undefined) {
        if (this.paused) {
          // Exactly-once: nothing stays open while paused (a long-open transaction
          // holds read_committed readers back and is aborted at its timeout).
          await this.finalTransaction();
          await this.waitForSignal();
          continue;
        }
        // A full request already waits for a free slot: polling further ahead would
        // only hold more records in memory, not send them sooner.
        if (
          this.inFlight > 0 &&
          (this.outstandingBytes >= o.bufferMemory || this.pendingBytes >= o.maxRequestBytes)
        ) {
          await this.waitForSignal();
          continue;
        }
        let records: SourceRecord[] | null;
        const pollStart = o.clock.now();
        try {
          records = await o.task.poll();
          this.m?.recordPoll(records?.length ?? 0, o.clock.now() - pollStart);
        } catch (e) {
          if (errorKind(e) !== 'retriable') throw e;
          o.metrics?.errors.recordRetry();
          o.logger.warn(
            { err: e },
            `${taskIdString(o.id)} poll failed with a retriable error; polling again`,
          );
          await this.waitForSignal(POLL_RETRY_BACKOFF_MS);
          continue;
        }
        const polled = records !== null && records.length > 0;
        if (polled) await this.handOver(records as SourceRecord[]);
        const eo = o.exactlyOnce;
        let committing = false;
        if (eo !== undefined && this.failed === undefined) {
          // The batch was polled and converted while the previous commit was in flight;
          // its records go out only once that commit is answered (KIP-618), with the
          // offsets record behind them when this transaction ends here.
          await this.previousCommit(false);
          const action = eo.boundaries.afterBatch(o.clock.now(), polled);
          if (action === 'commit') {
            this.startCommit();
            committing = true;
          } else {
            this.kickSend();
            if (action !== null) await this.endTransaction(action);
          }
        }
        // A poll that settles at once resolves in a microtask: without a turn of the
        // event loop here, the producer's socket I/O and the commit timer would wait
        // until back-pressure stopped the loop.
        await new Promise((resolve) => setImmediate(resolve));
        // The transaction's AddPartitionsToTxn gathers partitions until the end of the
        // turn its sends were made in (transactional-producer.ts), which came after the
        // one above: one more turn sends it before the next batch is polled and
        // converted, rather than after.
        if (committing) await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (e) {
      this.fail(e);
    }
    if (this.failed !== undefined && !this.stopping) {
      // A failed task keeps the offsets of what the broker acknowledged (exactly-once:
      // aborts what it has open), then releases everything; the worker's later stop()
      // finds nothing left to do.
      await this.ending?.catch(() => undefined);
      await this.lastSettled;
      if (o.exactlyOnce === undefined) await this.commitOffsets();
      else await this.abortOpenTransaction();
      await this.close();
    }
  }

  /**
   * Hand polled records to the producer. Exactly-once: a transaction is ended right
   * after a record the task named through its TransactionContext.
   */
  private async handOver(records: readonly SourceRecord[]): Promise<void> {
    let from = 0;
    while (from < records.length && this.failed === undefined) {
      // Converting ahead of a commit in flight, in slices: the commit's answers (each
      // lets the next request of the transaction go out) wait at most for one slice.
      const ahead = this.ending !== null;
      const to = ahead ? Math.min(records.length, from + AHEAD_SLICE) : records.length;
      const { end, action } = this.prepare(records, from, to);
      this.kickSend();
      if (action !== null) {
        await this.previousCommit();
        await this.endTransaction(action);
      } else if (ahead && end < records.length) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      from = end;
    }
  }

  /**
   * Transform and convert records from `from` up to `to`; queue them for the
   * producer. Stops after a record at which the task asked to end the transaction:
   * `end` is the index after the last record prepared.
   */
  private prepare(
    records: readonly SourceRecord[],
    from: number,
    to: number,
  ): { end: number; action: TransactionAction | null } {
    const { o } = this;
    const boundaries = o.exactlyOnce?.boundaries;
    // While the previous transaction commits, records wait for the next one.
    const ahead = this.ending !== null;
    for (let i = from; i < to; i++) {
      const record = records[i] as SourceRecord;
      if (boundaries !== undefined && !ahead) this.inTransaction ||= this.begin();
      const submitted = this.submitted.submit(record.sourcePartition, record.sourceOffset);
      if (boundaries !== undefined) this.txnOffsets.set(submitted.queue.key, submitted);
      const transformed = o.transforms.apply(record, o.operator, { sourceRecord: record });
      const pending =
        transformed === null || transformed === skipped
          ? null
          : this.convert(record, transformed, submitted);
      if (pending === null) {
        // Dropped by a transform or tolerated: its offset still counts as done.
        this.submitted.ack(submitted);
        if (ahead) this.nextHeld.push(record);
        else this.commitRecord(record, null);
      } else {
        this.outstandingBytes += pending.bytes;
        this.txnRecords++;
        if (ahead) {
          this.nextPendingBytes += pending.bytes;
          this.nextPending.push(pending);
        } else {
          this.pendingBytes += pending.bytes;
          this.pending.push(pending);
        }
      }
      const action = boundaries?.afterRecord(record) ?? null;
      if (action !== null) return { end: i + 1, action };
    }
    return { end: to, action: null };
  }

  /** `transformed` converted into the record to produce (null: skipped by a tolerated error). */
  private convert(
    original: SourceRecord,
    record: SourceRecord,
    submitted: SubmittedRecord,
  ): Pending | null {
    const { o } = this;
    const c = o.converters;
    const ctx = { sourceRecord: record };
    const key = o.operator.execute('KEY_CONVERTER', c.keyClass, ctx, () =>
      c.key.fromConnectData(record.topic, record.keySchema ?? null, record.key ?? null),
    );
    if (key === skipped) return null;
    const value = o.operator.execute('VALUE_CONVERTER', c.valueClass, ctx, () =>
      c.value.fromConnectData(record.topic, record.valueSchema ?? null, record.value ?? null),
    );
    if (value === skipped) return null;
    const headers =
      record.headers === undefined || record.headers.length === 0
        ? NO_HEADERS
        : o.operator.execute('HEADER_CONVERTER', c.headerClass, ctx, () => {
            const out: RecordHeader[] = [];
            for (const h of record.headers ?? []) {
              const bytes = c.header.toBytes(record.topic, h);
              if (bytes !== null) out.push({ key: h.key, value: bytes });
            }
            return out;
          });
    if (headers === skipped) return null;
    if (o.exactlyOnce !== undefined && record.topic === o.exactlyOnce.offsetsTopic) {
      // As Kafka: the task's next offset read would wait on its own open transaction.
      throw new ConnectException(
        'Source tasks may not produce to their own offsets topics when exactly-once support is enabled',
      );
    }
    return {
      topic: record.topic,
      partition: record.kafkaPartition ?? null,
      key,
      value,
      timestamp: record.timestamp ?? null,
      headers,
      record: original,
      submitted,
      bytes: (key?.length ?? 0) + (value?.length ?? 0) + 64,
    };
  }

  /**
   * Start requests of up to max.request.size with what is pending, while fewer than
   * the producer's max in flight are outstanding.
   */
  private kickSend(): void {
    while (
      this.inFlight < this.o.producer.maxInFlight &&
      this.pending.length > 0 &&
      this.failed === undefined
    ) {
      let bytes = 0;
      let n = 0;
      while (
        n < this.pending.length &&
        (n === 0 || bytes + (this.pending[n] as Pending).bytes <= this.o.maxRequestBytes)
      ) {
        bytes += (this.pending[n] as Pending).bytes;
        n++;
      }
      const batch = this.pending.splice(0, n);
      this.pendingBytes -= bytes;
      this.inFlight++;
      this.lastSettled = this.sendBatch(batch, this.lastSettled).finally(() => {
        this.inFlight--;
        this.kickSend();
        this.signal();
      });
    }
  }

  private async sendBatch(batch: Pending[], previous: Promise<void>): Promise<void> {
    const { o } = this;
    try {
      // Topic creation may wait on the admin client: the hand-over to the producer is
      // chained so that requests still go out in the order they were formed.
      const started = this.sendOrder.then(async () => {
        if (o.topicCreation !== null && o.admin !== null) {
          // Not the offsets topic of an exactly-once task: the worker made it.
          for (const topic of new Set(batch.filter((p) => p.record !== null).map((p) => p.topic))) {
            await o.topicCreation.ensure(topic, o.admin);
          }
        }
        return { acks: o.producer.send(batch) };
      });
      this.sendOrder = started.then(
        () => undefined,
        () => undefined,
      );
      const { acks } = await started;
      acks.catch(() => undefined);
      // Acknowledgements are processed in send order, whatever order promises settle in.
      await previous;
      const metadata = await acks;
      // Each acknowledged batch, as Kafka records the active topic per record: after a
      // topics/reset the topic shows again as soon as records flow (the reporter and the
      // status store keep it to one write).
      let last: string | undefined;
      for (const p of batch) {
        if (p.topic === last || p.record === null) continue;
        last = p.topic;
        o.status.topicUsed?.(o.id.connector, p.topic);
      }
      // The producer copied the bytes into batches that are now acknowledged: the
      // converters may reuse their memory. (A failed send does not hand them back.)
      const { key, value } = o.converters;
      let written = 0;
      batch.forEach((p, i) => {
        this.outstandingBytes -= p.bytes;
        // An exactly-once task's offsets record: not the task's, nothing to report.
        if (p.record === null || p.submitted === null) return;
        if (p.key !== null) key.release?.(p.key);
        if (p.value !== null) value.release?.(p.value);
        this.submitted.ack(p.submitted);
        this.commitRecord(p.record, metadata[i] as RecordMetadata);
        written++;
      });
      this.m?.recordWrite(written);
    } catch (e) {
      for (const p of batch) this.outstandingBytes -= p.bytes;
      this.fail(e);
    }
  }

  private commitRecord(record: SourceRecord, metadata: RecordMetadata | null): void {
    if (this.taskStopped || this.o.task.commitRecord === undefined) return;
    if (this.o.exactlyOnce !== undefined) {
      // Delivered only once its transaction commits.
      this.heldRecords.push(record);
      this.heldMetadata.push(metadata);
      return;
    }
    this.notifyCommitRecord(record, metadata);
  }

  private notifyCommitRecord(record: SourceRecord, metadata: RecordMetadata | null): void {
    if (this.taskStopped || this.o.task.commitRecord === undefined) return;
    try {
      const r = this.o.task.commitRecord(record, metadata);
      if (r instanceof Promise)
        r.catch((e: unknown) =>
          this.o.logger.warn({ err: e }, `${taskIdString(this.o.id)} commitRecord failed`),
        );
    } catch (e) {
      // Kafka Connect logs and goes on: commitRecord is a notification.
      this.o.logger.warn({ err: e }, `${taskIdString(this.o.id)} commitRecord failed`);
    }
  }

  // ---- exactly-once transactions ------------------------------------------------------

  /** Opens a transaction; returns true (for `inTransaction ||= this.begin()`). */
  private begin(): boolean {
    (this.o.exactlyOnce as ExactlyOnceSetup).producer.beginTransaction();
    return true;
  }

  /** Every pending record handed to the producer and its send settled. */
  private async drainSends(): Promise<void> {
    while (this.failed === undefined) {
      this.kickSend();
      if (this.pending.length === 0 && this.inFlight === 0) return;
      await this.lastSettled;
    }
  }

  /** Every pending record handed to the producer (sends may still be in flight). */
  private async handOverPending(): Promise<void> {
    while (this.failed === undefined) {
      this.kickSend();
      if (this.pending.length === 0) return;
      await this.lastSettled;
    }
  }

  /**
   * Ends the open transaction at a boundary: commit sends the offsets of its records
   * into it and commits; abort drops its records and commits their offsets in a
   * transaction of their own (Kafka's connector-defined abort). Throws on failure.
   */
  private async endTransaction(action: TransactionAction): Promise<void> {
    const { o } = this;
    const eo = o.exactlyOnce as ExactlyOnceSetup;
    // Taken before the first await: a commit runs while the loop converts the next
    // batch (startCommit), whose offsets belong to the next transaction.
    const offsets = this.txnOffsets;
    this.txnOffsets = new Map();
    // An abort drops the records: the commit of their offsets below has none.
    const size = action === 'abort' ? 0 : this.txnRecords;
    this.txnRecords = 0;
    if (action === 'abort') {
      await this.drainSends();
      if (this.failed !== undefined) return;
      if (this.inTransaction) {
        await eo.producer.abortTransaction();
        this.inTransaction = false;
        o.logger.info(`${taskIdString(o.id)} aborted a transaction as the task asked`);
      }
      // Not delivered: commitRecord says so with no metadata.
      this.heldMetadata.fill(null);
    }
    // (A commit's records still pending go out below, the offsets record behind them.)
    if (!this.inTransaction && offsets.size === 0) {
      await this.afterCommit();
      return;
    }
    this.inTransaction ||= this.begin();
    const started = o.clock.now();
    const committed = eo.copyOffsetsToWorker !== undefined ? new Map<string, string>() : null;
    try {
      for (const [key, { offset }] of offsets) {
        const value = offsetValue(offset);
        committed?.set(key, value);
        const entry: Pending = {
          topic: eo.offsetsTopic,
          partition: null,
          key: Buffer.from(key, 'utf8'),
          value: Buffer.from(value, 'utf8'),
          timestamp: null,
          headers: NO_HEADERS,
          record: null,
          submitted: null,
          bytes: key.length + value.length + 64,
        };
        this.outstandingBytes += entry.bytes;
        this.pendingBytes += entry.bytes;
        this.pending.push(entry);
      }
      // Behind the transaction's records: in their last request when it has room.
      await this.handOverPending();
      // Every request formed, and (topic creation may hold them) with the producer.
      await this.sendOrder;
      if (this.failed !== undefined) return;
      // Waits for every send of the transaction (the offsets' included), then commits.
      await eo.producer.commitTransaction();
    } catch (e) {
      this.m?.recordOffsetCommit(false, o.clock.now() - started);
      throw e;
    }
    this.m?.recordOffsetCommit(true, o.clock.now() - started);
    this.m?.recordTransaction(size);
    this.inTransaction = false;
    // Only once committed: an aborted transaction's offsets must not reach the fallback.
    if (committed !== null && committed.size > 0) eo.copyOffsetsToWorker?.(committed);
    // The acknowledgements of the committed records are processed in order first.
    await this.lastSettled;
    this.submitted.committableOffsets();
    await this.afterCommit();
  }

  /**
   * After a commit: the held commitRecord calls, then task.commit(). That runs on its
   * own (it may read the offsets back and confirm them upstream, as the CDC task
   * does) while the loop goes on, so, as with at-least-once commits, it may overlap
   * poll(); and at most once per offset.flush.interval.ms: the transactions committed
   * within an interval share one call at its end (at pause and stop at once).
   */
  private async afterCommit(): Promise<void> {
    const records = this.heldRecords;
    const metadata = this.heldMetadata;
    this.heldRecords = [];
    this.heldMetadata = [];
    for (let i = 0; i < records.length; i++)
      this.notifyCommitRecord(records[i] as SourceRecord, metadata[i] ?? null);
    this.scheduleTaskCommit();
  }

  private scheduleTaskCommit(): void {
    const { o } = this;
    if (o.task.commit === undefined || this.taskCommitQueued || this.cancelTaskCommitTimer !== null)
      return;
    const wait = this.lastTaskCommit + o.offsetFlushIntervalMs - o.clock.now();
    if (wait <= 0) {
      this.queueTaskCommit();
      return;
    }
    this.cancelTaskCommitTimer = o.timers.schedule(wait, () => {
      this.cancelTaskCommitTimer = null;
      this.queueTaskCommit();
    });
  }

  private queueTaskCommit(): void {
    if (this.taskCommitQueued) return;
    this.taskCommitQueued = true;
    this.taskCommits = this.taskCommits.then(() => {
      this.taskCommitQueued = false;
      this.lastTaskCommit = this.o.clock.now();
      return this.taskCommit();
    });
  }

  /** The task.commit() an interval holds back, now; resolves once every one settled. */
  private async flushTaskCommit(): Promise<void> {
    if (this.cancelTaskCommitTimer !== null) {
      this.cancelTaskCommitTimer();
      this.cancelTaskCommitTimer = null;
      this.queueTaskCommit();
    }
    await this.taskCommits;
  }

  /**
   * Starts committing the open transaction without waiting for it (the loop polls and
   * converts the next batch meanwhile); previousCommit() waits for it.
   */
  private startCommit(): void {
    const ending = this.endTransaction('commit');
    ending.catch(() => undefined);
    this.ending = ending;
  }

  /**
   * Waits for the commit startCommit() started, if any (throws its failure), then opens
   * the next transaction for the records converted meanwhile and (`kick`) sends them.
   */
  private async previousCommit(kick = true): Promise<void> {
    const ending = this.ending;
    if (ending === null) return;
    try {
      await ending;
    } finally {
      this.ending = null;
    }
    if (this.failed !== undefined) return;
    const next = this.nextPending;
    this.nextPending = [];
    for (const p of next) this.pending.push(p);
    this.pendingBytes += this.nextPendingBytes;
    this.nextPendingBytes = 0;
    for (const r of this.nextHeld) this.commitRecord(r, null);
    this.nextHeld = [];
    if (this.txnOffsets.size > 0) this.inTransaction ||= this.begin();
    if (kick) this.kickSend();
  }

  /** At pause or stop: end the open transaction as the boundaries say; abort otherwise. */
  private async finalTransaction(): Promise<void> {
    const eo = this.o.exactlyOnce;
    if (eo === undefined || this.failed !== undefined) return;
    try {
      await this.previousCommit();
    } catch (e) {
      this.fail(e);
      await this.abortOpenTransaction();
      return;
    }
    if (this.inTransaction || this.pending.length > 0 || this.txnOffsets.size > 0) {
      const action = eo.boundaries.final(this.o.clock.now());
      try {
        if (action !== null) await this.endTransaction(action);
      } catch (e) {
        this.fail(e);
      }
      await this.abortOpenTransaction();
    }
    await this.flushTaskCommit();
  }

  /** Abort a transaction left open (failure, or stop without a commit); logs errors. */
  private async abortOpenTransaction(): Promise<void> {
    const eo = this.o.exactlyOnce;
    if (eo === undefined || !this.inTransaction) return;
    this.inTransaction = false;
    this.heldRecords = [];
    this.heldMetadata = [];
    this.txnOffsets = new Map();
    this.txnRecords = 0;
    try {
      await eo.producer.abortTransaction();
    } catch (e) {
      this.o.logger.warn(
        { err: e },
        `${taskIdString(this.o.id)} could not abort its open transaction; the broker aborts it at transaction.timeout.ms`,
      );
    }
  }

  private scheduleCommit(): void {
    this.cancelCommitTimer = this.o.timers.schedule(this.o.offsetFlushIntervalMs, () => {
      this.cancelCommitTimer = null;
      void this.commitOffsets().finally(() => {
        if (!this.stopping && this.failed === undefined) this.scheduleCommit();
      });
    });
  }

  /** Commit the offsets of acknowledged records; never overlaps another commit. */
  commitOffsets(): Promise<void> {
    if (this.committing !== null) return this.committing;
    this.committing = this.doCommit().finally(() => {
      this.committing = null;
    });
    return this.committing;
  }

  private async doCommit(): Promise<void> {
    const { o } = this;
    const committable = this.submitted.committableOffsets();
    for (const { partition, offset } of committable.offsets.values())
      o.offsetWriter.offset(partition, offset);
    if (committable.uncommitted > 0) {
      o.logger.debug(
        { largest: committable.largestQueue },
        `${taskIdString(o.id)} committing offsets for ${committable.committed} acknowledged messages; ${committable.uncommitted} messages are still waiting for acknowledgement`,
      );
    }
    if (o.offsetWriter.beginFlush()) {
      let timer: (() => void) | undefined;
      const started = o.clock.now();
      try {
        await Promise.race([
          o.offsetWriter.doFlush(),
          new Promise<never>((_, reject) => {
            timer = o.timers.schedule(o.offsetFlushTimeoutMs, () =>
              reject(
                new Error(`offset flush did not complete within ${o.offsetFlushTimeoutMs} ms`),
              ),
            );
          }),
        ]);
        this.m?.recordOffsetCommit(true, o.clock.now() - started);
      } catch (e) {
        this.m?.recordOffsetCommit(false, o.clock.now() - started);
        o.offsetWriter.cancelFlush();
        o.logger.error({ err: e }, `${taskIdString(o.id)} failed to commit offsets`);
        return;
      } finally {
        timer?.();
      }
    }
    await this.taskCommit();
  }

  private async taskCommit(): Promise<void> {
    const { o } = this;
    if (this.taskStopped || o.task.commit === undefined) return;
    try {
      await o.task.commit();
    } catch (e) {
      o.logger.error({ err: e }, `${taskIdString(o.id)} task.commit() failed`);
    }
  }

  private fail(error: unknown): void {
    if (this.failed !== undefined) return;
    this.failed = error;
    this.o.logger.error({ err: error }, `${taskIdString(this.o.id)} failed`);
    this.o.status.taskState(this.o.id, 'FAILED', errorTrace(error));
    this.signal();
  }

  get isFailed(): boolean {
    return this.failed !== undefined;
  }

  /** Stop as the header says; resolves when everything the task opened is released. */
  async stop(): Promise<void> {
    if (this.stopping) return this.stopped;
    this.stopping = true;
    this.stopped = this.doStop();
    return this.stopped;
  }

  private stopped: Promise<void> = Promise.resolve();

  private async doStop(): Promise<void> {
    const { o } = this;
    this.cancelCommitTimer?.();
    this.signal();
    if (this.loop !== null) {
      const ended = await this.within(this.loop, o.gracefulShutdownMs);
      if (!ended) {
        o.logger.warn(
          `${taskIdString(o.id)} poll did not return within ${o.gracefulShutdownMs} ms; stopping the task`,
        );
        await this.stopTask();
      }
      if (o.exactlyOnce !== undefined) await this.finalTransaction();
      else await this.drainAndCommit();
    }
    await this.close();
    if (this.failed === undefined) o.status.taskState(o.id, 'UNASSIGNED');
  }

  /** At stop: the records outstanding acknowledged (within offset.flush.timeout.ms), offsets committed. */
  private async drainAndCommit(): Promise<void> {
    const { o } = this;
    this.kickSend();
    // A failed task sends nothing more: only what is in flight can still be acknowledged.
    let drained = true;
    if (this.failed === undefined) {
      drained = await this.submitted.awaitAllAcknowledged(o.offsetFlushTimeoutMs);
    } else {
      await this.lastSettled;
    }
    if (!drained) {
      o.logger.warn(
        `${taskIdString(o.id)} ${this.submitted.unacknowledged} records were not acknowledged within ${o.offsetFlushTimeoutMs} ms; their offsets are not committed`,
      );
    }
    // A periodic commit still in flight took its offsets before the last acknowledgements:
    // joining it would leave those uncommitted, so the final commit follows it.
    await this.committing?.catch(() => undefined);
    await this.commitOffsets();
  }

  private closed = false;
  /** task.start in progress or settled; null until it is called. */
  private taskStart: Promise<void> | null = null;
  private taskStartSettled = false;

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelCommitTimer?.();
    this.cancelTaskCommitTimer?.();
    this.cancelTaskCommitTimer = null;
    if (this.taskStart !== null && !this.taskStartSettled) {
      // See the header: release ours now, stop the task once its start returns.
      this.o.logger.warn(
        `${taskIdString(this.o.id)} is stopped while its start() has not returned; its clients are closed now and its stop() is called once start() returns`,
      );
      await this.releaseClients();
      void this.stopTask();
      return;
    }
    await this.stopTask();
    await this.releaseClients();
  }

  private async releaseClients(): Promise<void> {
    try {
      await this.o.producer.disconnect();
    } catch (e) {
      this.o.logger.warn({ err: e }, `${taskIdString(this.o.id)} producer close failed`);
    }
    this.o.transforms.close();
    closeRecordConverters(this.o.converters);
    try {
      await this.o.onClosed?.();
    } catch (e) {
      this.o.logger.warn({ err: e }, `${taskIdString(this.o.id)} offset store release failed`);
    }
  }

  /** task.stop(), once, after its start settled; not at all if start was never called. */
  private async stopTask(): Promise<void> {
    if (this.taskStopped || this.taskStart === null) return;
    this.taskStopped = true;
    await this.taskStart.catch(() => undefined);
    // A task.commit() after the last transaction settles first (calls never overlap).
    await this.taskCommits;
    try {
      await this.o.task.stop();
    } catch (e) {
      this.o.logger.error({ err: e }, `${taskIdString(this.o.id)} stop() failed`);
    }
  }

  private within(p: Promise<unknown>, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = this.o.timers.schedule(ms, () => resolve(false));
      p.then(
        () => {
          cancel();
          resolve(true);
        },
        () => {
          cancel();
          resolve(true);
        },
      );
    });
  }
}
