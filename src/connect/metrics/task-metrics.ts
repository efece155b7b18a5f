/**
 * The per-task metric objects the task runners update: Kafka Connect's
 * connector-task-metrics, source-task-metrics, sink-task-metrics and
 * task-error-metrics groups (their attributes are listed in connect-metrics.ts,
 * which exports them). One of each per task this worker runs, made when the worker
 * starts the task and dropped when it stops it.
 *
 * Hot-path contract: every `record*` method is a few field updates, no clock read
 * unless it says so, no allocation, no label lookup; the runners call them per poll,
 * per put, per commit, never per record. Values that the runner already holds
 * (partitions assigned, records in flight) are not copied here on every change:
 * the runner gives a `view` read at scrape time.
 *
 * Called on the worker's event loop only (the task runners and the worker).
 */
import type { Clock } from '../../util/clock.ts';
import type { ConnectorState } from '../herder/herder.ts';
import type { ConsumerLag } from './consumer-lag.ts';
import { WindowedRate, WindowedStat } from './windowed-stat.ts';

/** connector-task-metrics: status, time running or paused, batch sizes, offset commits. */
export class ConnectorTaskMetrics {
  state: ConnectorState = 'UNASSIGNED';
  private stateSince: number;
  private readonly createdAt: number;
  private runningMs = 0;
  private pausedMs = 0;
  readonly batchSize: WindowedStat;
  readonly offsetCommitTime: WindowedStat;
  offsetCommitSuccesses = 0;
  offsetCommitFailures = 0;

  constructor(private readonly clock: Clock) {
    this.createdAt = clock.now();
    this.stateSince = this.createdAt;
    this.batchSize = new WindowedStat(clock);
    this.offsetCommitTime = new WindowedStat(clock);
  }

  /** A state the task reported (reads the clock: transitions are rare). */
  recordState(state: ConnectorState): void {
    if (state === this.state) return;
    const now = this.clock.now();
    this.accrue(now);
    this.state = state;
    this.stateSince = now;
  }

  /** Records in one poll (source) or one put (sink). */
  recordBatch(records: number): void {
    this.batchSize.record(records);
  }

  /** One offset commit: whether it succeeded, and how long it took. */
  recordOffsetCommit(ok: boolean, ms: number): void {
    if (ok) this.offsetCommitSuccesses++;
    else this.offsetCommitFailures++;
    this.offsetCommitTime.record(ms);
  }

  /** Fraction of the task's life spent RUNNING (Kafka's running-ratio). */
  runningRatio(): number {
    return this.ratio('RUNNING');
  }

  /** Fraction of the task's life spent PAUSED (Kafka's pause-ratio). */
  pauseRatio(): number {
    return this.ratio('PAUSED');
  }

  /** Kafka's offset-commit-success-percentage (0..1, NaN before any commit). */
  offsetCommitSuccessRatio(): number {
    const n = this.offsetCommitSuccesses + this.offsetCommitFailures;
    return n === 0 ? Number.NaN : this.offsetCommitSuccesses / n;
  }

  private ratio(state: 'RUNNING' | 'PAUSED'): number {
    const now = this.clock.now();
    const life = now - this.createdAt;
    if (life <= 0) return this.state === state ? 1 : 0;
    const current = this.state === state ? now - this.stateSince : 0;
    return ((state === 'RUNNING' ? this.runningMs : this.pausedMs) + current) / life;
  }

  private accrue(now: number): void {
    if (this.state === 'RUNNING') this.runningMs += now - this.stateSince;
    else if (this.state === 'PAUSED') this.pausedMs += now - this.stateSince;
  }
}

/** What a sink runner shows at scrape time. */
export interface SinkTaskView {
  /** Partitions assigned to the task (partition-count). */
  partitionCount(): number;
  /** Records read and not yet committed (sink-record-active-count). */
  activeRecords(): number;
}

/**
 * sink-task-metrics. read: records fetched and handed to the converters; send:
 * records put to the task after converters and transforms (a transform may drop
 * some). Offset commits: `completed` when the group took them, `skipped` when the
 * group refused them because it was rebalancing (the commit before the rejoin covers
 * them), `failed` otherwise (the task fails).
 */
export class SinkTaskMetrics {
  recordsRead = 0;
  recordsSent = 0;
  offsetCommitCompletions = 0;
  offsetCommitSkips = 0;
  /** Offset commits tried (Kafka's offset-commit-seq-no). */
  offsetCommitSeqNo = 0;
  readonly putBatchTime: WindowedStat;
  readonly readRate: WindowedRate;
  readonly sendRate: WindowedRate;
  readonly commitCompletionRate: WindowedRate;
  readonly commitSkipRate: WindowedRate;
  view: SinkTaskView | null = null;
  /** Records lag per partition, refreshed when scraped (set by a runner that can ask end offsets). */
  lag: ConsumerLag | null = null;

  constructor(
    readonly task: ConnectorTaskMetrics,
    clock: Clock,
  ) {
    this.putBatchTime = new WindowedStat(clock);
    this.readRate = new WindowedRate(clock);
    this.sendRate = new WindowedRate(clock);
    this.commitCompletionRate = new WindowedRate(clock);
    this.commitSkipRate = new WindowedRate(clock);
  }

  /** Records fetched for the task, before conversion. */
  recordRead(records: number): void {
    this.recordsRead += records;
  }

  /** One put that returned: records given, and how long the put took. */
  recordPut(records: number, ms: number): void {
    this.recordsSent += records;
    this.putBatchTime.record(ms);
    this.task.recordBatch(records);
  }

  recordOffsetCommitCompleted(ms: number): void {
    this.offsetCommitSeqNo++;
    this.offsetCommitCompletions++;
    this.task.recordOffsetCommit(true, ms);
  }

  recordOffsetCommitSkipped(ms: number): void {
    this.offsetCommitSeqNo++;
    this.offsetCommitSkips++;
    this.task.recordOffsetCommit(false, ms);
  }

  recordOffsetCommitFailed(ms: number): void {
    this.offsetCommitSeqNo++;
    this.task.recordOffsetCommit(false, ms);
  }
}

/** What a source runner shows at scrape time. */
export interface SourceTaskView {
  /** Records polled and not yet acknowledged by the broker (source-record-active-count). */
  activeRecords(): number;
}

/**
 * source-task-metrics. poll: records the task's poll returned (before transforms);
 * write: records the broker acknowledged (after transforms; dropped or tolerated
 * records are not written). Offset commits count in connector-task-metrics.
 * An exactly-once task also has KIP-618's transaction-size-avg/min/max: the records
 * it handed to its producer in each transaction it committed (an aborted one counts
 * nothing; the offsets-only commit after it counts 0), from `trackTransactions()` on,
 * as Kafka's ExactlyOnceWorkerSourceTask registers them.
 */
export class SourceTaskMetrics {
  recordsPolled = 0;
  recordsWritten = 0;
  readonly pollBatchTime: WindowedStat;
  readonly pollRate: WindowedRate;
  readonly writeRate: WindowedRate;
  /** Exactly-once tasks only (null: the series are not shown). */
  transactionSize: WindowedStat | null = null;
  view: SourceTaskView | null = null;

  constructor(
    readonly task: ConnectorTaskMetrics,
    private readonly clock: Clock,
  ) {
    this.pollBatchTime = new WindowedStat(clock);
    this.pollRate = new WindowedRate(clock);
    this.writeRate = new WindowedRate(clock);
  }

  /** One poll that returned records (or none: records 0), and how long it took. */
  recordPoll(records: number, ms: number): void {
    this.recordsPolled += records;
    this.pollBatchTime.record(ms);
    this.task.recordBatch(records);
  }

  /** Records the broker acknowledged. */
  recordWrite(records: number): void {
    this.recordsWritten += records;
  }

  /** One source offset commit (offset writer flush): whether it succeeded, and how long. */
  recordOffsetCommit(ok: boolean, ms: number): void {
    this.task.recordOffsetCommit(ok, ms);
  }

  /** The task runs exactly-once: its transaction sizes are shown. */
  trackTransactions(): void {
    this.transactionSize ??= new WindowedStat(this.clock);
  }

  /** A committed transaction and the records the task handed to the producer in it. */
  recordTransaction(records: number): void {
    this.transactionSize?.record(records);
  }
}

/**
 * task-error-metrics (Kafka's ErrorHandlingMetrics). An error is an operation that
 * failed for good (after its retries); each failed attempt is a failure, so
 * failures = errors + retries that failed again. Skipped records are read from the
 * tolerance operator at scrape time (`skippedRecords`).
 */
export class TaskErrorMetrics {
  recordErrors = 0;
  recordFailures = 0;
  retries = 0;
  errorsLogged = 0;
  dlqProduceRequests = 0;
  dlqProduceFailures = 0;
  /** Epoch ms of the last error; 0 before any (Kafka's last-error-timestamp). */
  lastErrorTimestamp = 0;
  /** Records skipped by errors.tolerance=all, read at scrape time. */
  skippedRecords: () => number = () => 0;

  constructor(private readonly clock: Clock) {}

  /** An operation failed for good (reads the clock: errors are rare). */
  recordError(): void {
    this.recordErrors++;
    this.recordFailures++;
    this.lastErrorTimestamp = this.clock.now();
  }

  /** A failed attempt that is retried. */
  recordRetry(): void {
    this.retries++;
    this.recordFailures++;
  }

  recordErrorLogged(): void {
    this.errorsLogged++;
  }

  recordDeadLetterQueueProduceRequest(): void {
    this.dlqProduceRequests++;
  }

  recordDeadLetterQueueProduceFailure(): void {
    this.dlqProduceFailures++;
  }
}
