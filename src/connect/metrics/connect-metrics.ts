/**
 * ConnectMetrics: one worker's metrics registry, exported on GET /metrics in the
 * Prometheus text format with the names the Prometheus JMX exporter gives Kafka
 * Connect's MBeans (`kafka.connect:type=<group>,connector=..,task=..` attribute
 * `<attr>` becomes `kafka_connect_<group>_<attr>{connector="..",task=".."}`, dashes as
 * underscores), so dashboards built for Kafka Connect read ours:
 *
 *   connect-worker-metrics            connector-count, task-count, startup attempts,
 *                                     successes, failures and their percentages; per
 *                                     connector, its tasks here by state
 *   connect-worker-rebalance-metrics  completed-rebalances-total, epoch, rebalancing,
 *                                     rebalance-avg/max-time-ms, time-since-last-rebalance-ms
 *   connector-task-metrics            status (one series, value 1, label status),
 *                                     running-ratio, pause-ratio, batch-size-avg/max,
 *                                     offset-commit-avg/max-time-ms, -success/-failure-percentage
 *   source-task-metrics               source-record-poll/write-rate and -total,
 *                                     poll-batch-avg/max-time-ms, source-record-active-count,
 *                                     transaction-size-avg/min/max (exactly-once tasks)
 *   sink-task-metrics                 sink-record-read/send-rate and -total,
 *                                     put-batch-avg/max-time-ms, partition-count,
 *                                     offset-commit-completion/skip-rate and -total,
 *                                     offset-commit-seq-no, sink-record-active-count
 *   task-error-metrics                total-record-errors, -failures, total-records-skipped,
 *                                     total-retries, total-errors-logged,
 *                                     deadletterqueue-produce-requests/-failures,
 *                                     last-error-timestamp
 *
 * plus each sink task's consumer lag per topic partition under the JMX exporter's name
 * of Kafka's consumer-fetch-manager-metrics records-lag,
 * `kafka_consumer_consumer_fetch_manager_metrics_records_lag` (consumer-lag.ts: the
 * one value that needs a broker round trip, made when scraped), the plugins' own
 * metrics (plugin-metrics.ts), a few process gauges, and what
 * `addSource` adds (the embedded broker's registry, whose text the CLI fetches from
 * the broker thread on each scrape).
 *
 * Everything is computed at scrape time from the objects the runtime updates
 * (lazy-metric.ts says why). Task objects are registered by the worker when it starts
 * a task (`addTask`) and removed when it stops it (`removeTask`), as Kafka removes a
 * task's metric groups.
 */
import { Registry } from 'prom-client';
import { type Clock, systemClock } from '../../util/clock.ts';
import { PROCESS_GAUGES } from '../../util/process-gauges.ts';
import type { ConnectorState, ConnectorTaskId } from '../herder/herder.ts';
import type { StatusListener } from '../runtime/status-listener.ts';
import { REFRESH_TIMEOUT_MS } from './consumer-lag.ts';
import { type Labels, LazyMetric, type MetricType, type Sample } from './lazy-metric.ts';
import { PluginMetricFamilies, type TaskPluginMetrics } from './plugin-metrics.ts';
import {
  ConnectorTaskMetrics,
  SinkTaskMetrics,
  SourceTaskMetrics,
  TaskErrorMetrics,
} from './task-metrics.ts';
import { WorkerMetrics, WorkerRebalanceMetrics } from './worker-metrics.ts';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The metric objects of one task on this worker. */
export interface TaskMetrics {
  readonly id: ConnectorTaskId;
  readonly labels: Labels;
  readonly connectorTask: ConnectorTaskMetrics;
  readonly errors: TaskErrorMetrics;
  /** Set for a source task. */
  readonly source: SourceTaskMetrics | null;
  /** Set for a sink task. */
  readonly sink: SinkTaskMetrics | null;
  readonly plugin: TaskPluginMetrics;
}

/** Kafka Connect's task states, as the status attribute spells them. */
const TASK_STATES: readonly ConnectorState[] = [
  'RUNNING',
  'PAUSED',
  'FAILED',
  'UNASSIGNED',
  'RESTARTING',
];

type Read = (t: TaskMetrics) => number | undefined;

/** [group, attribute, type, help, read] of every per-task metric. */
const TASK_METRICS: ReadonlyArray<readonly [string, string, MetricType, string, Read]> = [
  [
    'connector-task-metrics',
    'running-ratio',
    'gauge',
    'Fraction of time the task has spent in the running state.',
    (t) => t.connectorTask.runningRatio(),
  ],
  [
    'connector-task-metrics',
    'pause-ratio',
    'gauge',
    'Fraction of time the task has spent in the paused state.',
    (t) => t.connectorTask.pauseRatio(),
  ],
  [
    'connector-task-metrics',
    'batch-size-avg',
    'gauge',
    'Average number of records in the batches the task has processed.',
    (t) => t.connectorTask.batchSize.avg(),
  ],
  [
    'connector-task-metrics',
    'batch-size-max',
    'gauge',
    'Largest number of records in the batches the task has processed.',
    (t) => t.connectorTask.batchSize.maxValue(),
  ],
  [
    'connector-task-metrics',
    'offset-commit-avg-time-ms',
    'gauge',
    'Average time in milliseconds taken by the task to commit offsets.',
    (t) => t.connectorTask.offsetCommitTime.avg(),
  ],
  [
    'connector-task-metrics',
    'offset-commit-max-time-ms',
    'gauge',
    'Maximum time in milliseconds taken by the task to commit offsets.',
    (t) => t.connectorTask.offsetCommitTime.maxValue(),
  ],
  [
    'connector-task-metrics',
    'offset-commit-success-percentage',
    'gauge',
    "Fraction of the task's offset commit attempts that succeeded.",
    (t) => t.connectorTask.offsetCommitSuccessRatio(),
  ],
  [
    'connector-task-metrics',
    'offset-commit-failure-percentage',
    'gauge',
    "Fraction of the task's offset commit attempts that failed.",
    (t) => 1 - t.connectorTask.offsetCommitSuccessRatio(),
  ],
  [
    'source-task-metrics',
    'source-record-poll-total',
    'counter',
    'Records produced or polled by the task (before transformations).',
    (t) => t.source?.recordsPolled,
  ],
  [
    'source-task-metrics',
    'source-record-poll-rate',
    'gauge',
    'Records produced or polled by the task per second.',
    (t) => t.source?.pollRate.read(t.source.recordsPolled),
  ],
  [
    'source-task-metrics',
    'source-record-write-total',
    'counter',
    'Records output from the transformations and written to Kafka.',
    (t) => t.source?.recordsWritten,
  ],
  [
    'source-task-metrics',
    'source-record-write-rate',
    'gauge',
    'Records output from the transformations and written to Kafka per second.',
    (t) => t.source?.writeRate.read(t.source.recordsWritten),
  ],
  [
    'source-task-metrics',
    'poll-batch-avg-time-ms',
    'gauge',
    'Average time in milliseconds taken by the task to poll a batch of records.',
    (t) => t.source?.pollBatchTime.avg(),
  ],
  [
    'source-task-metrics',
    'poll-batch-max-time-ms',
    'gauge',
    'Maximum time in milliseconds taken by the task to poll a batch of records.',
    (t) => t.source?.pollBatchTime.maxValue(),
  ],
  [
    'source-task-metrics',
    'source-record-active-count',
    'gauge',
    'Records polled by the task but not yet completely written to Kafka.',
    (t) => t.source?.view?.activeRecords() ?? (t.source ? 0 : undefined),
  ],
  [
    'source-task-metrics',
    'transaction-size-avg',
    'gauge',
    'Average number of records in the transactions the task committed (exactly-once tasks).',
    (t) => t.source?.transactionSize?.avg(),
  ],
  [
    'source-task-metrics',
    'transaction-size-min',
    'gauge',
    'Records in the smallest transaction the task committed (exactly-once tasks).',
    (t) => t.source?.transactionSize?.minValue(),
  ],
  [
    'source-task-metrics',
    'transaction-size-max',
    'gauge',
    'Records in the largest transaction the task committed (exactly-once tasks).',
    (t) => t.source?.transactionSize?.maxValue(),
  ],
  [
    'sink-task-metrics',
    'sink-record-read-total',
    'counter',
    'Records read from Kafka by the task (before transformations).',
    (t) => t.sink?.recordsRead,
  ],
  [
    'sink-task-metrics',
    'sink-record-read-rate',
    'gauge',
    'Records read from Kafka by the task per second.',
    (t) => t.sink?.readRate.read(t.sink.recordsRead),
  ],
  [
    'sink-task-metrics',
    'sink-record-send-total',
    'counter',
    'Records output from the transformations and sent (put) to the task.',
    (t) => t.sink?.recordsSent,
  ],
  [
    'sink-task-metrics',
    'sink-record-send-rate',
    'gauge',
    'Records output from the transformations and sent (put) to the task per second.',
    (t) => t.sink?.sendRate.read(t.sink.recordsSent),
  ],
  [
    'sink-task-metrics',
    'put-batch-avg-time-ms',
    'gauge',
    'Average time in milliseconds taken by the task to put a batch of records.',
    (t) => t.sink?.putBatchTime.avg(),
  ],
  [
    'sink-task-metrics',
    'put-batch-max-time-ms',
    'gauge',
    'Maximum time in milliseconds taken by the task to put a batch of records.',
    (t) => t.sink?.putBatchTime.maxValue(),
  ],
  [
    'sink-task-metrics',
    'partition-count',
    'gauge',
    'Topic partitions assigned to the task.',
    (t) => t.sink?.view?.partitionCount() ?? (t.sink ? 0 : undefined),
  ],
  [
    'sink-task-metrics',
    'sink-record-active-count',
    'gauge',
    'Records read from Kafka but not yet committed by the task.',
    (t) => t.sink?.view?.activeRecords() ?? (t.sink ? 0 : undefined),
  ],
  [
    'sink-task-metrics',
    'offset-commit-completion-total',
    'counter',
    'Offset commits that completed.',
    (t) => t.sink?.offsetCommitCompletions,
  ],
  [
    'sink-task-metrics',
    'offset-commit-completion-rate',
    'gauge',
    'Offset commits that completed per second.',
    (t) => t.sink?.commitCompletionRate.read(t.sink.offsetCommitCompletions),
  ],
  [
    'sink-task-metrics',
    'offset-commit-skip-total',
    'counter',
    'Offset commits refused by a group rebalance (retried before the rejoin).',
    (t) => t.sink?.offsetCommitSkips,
  ],
  [
    'sink-task-metrics',
    'offset-commit-skip-rate',
    'gauge',
    'Offset commits refused by a group rebalance per second.',
    (t) => t.sink?.commitSkipRate.read(t.sink.offsetCommitSkips),
  ],
  [
    'sink-task-metrics',
    'offset-commit-seq-no',
    'gauge',
    'Offset commits attempted by the task.',
    (t) => t.sink?.offsetCommitSeqNo,
  ],
  [
    'task-error-metrics',
    'total-record-errors',
    'counter',
    'Record processing operations that failed for good.',
    (t) => t.errors.recordErrors,
  ],
  [
    'task-error-metrics',
    'total-record-failures',
    'counter',
    'Record processing attempts that failed (retries included).',
    (t) => t.errors.recordFailures,
  ],
  [
    'task-error-metrics',
    'total-records-skipped',
    'counter',
    'Records skipped because of errors (errors.tolerance=all).',
    (t) => t.errors.skippedRecords(),
  ],
  [
    'task-error-metrics',
    'total-retries',
    'counter',
    'Operations retried.',
    (t) => t.errors.retries,
  ],
  [
    'task-error-metrics',
    'total-errors-logged',
    'counter',
    'Errors written to the log.',
    (t) => t.errors.errorsLogged,
  ],
  [
    'task-error-metrics',
    'deadletterqueue-produce-requests',
    'counter',
    'Writes to the dead letter queue attempted.',
    (t) => t.errors.dlqProduceRequests,
  ],
  [
    'task-error-metrics',
    'deadletterqueue-produce-failures',
    'counter',
    'Writes to the dead letter queue that failed.',
    (t) => t.errors.dlqProduceFailures,
  ],
  [
    'task-error-metrics',
    'last-error-timestamp',
    'gauge',
    "Epoch milliseconds of the task's last error (0: none).",
    (t) => t.errors.lastErrorTimestamp,
  ],
];

/** `kafka.connect:type=group` attribute `attr` as the JMX exporter names it. */
export function metricName(group: string, attr: string): string {
  return `kafka_connect_${group}_${attr}`.replaceAll('-', '_');
}

export interface ConnectMetricsOptions {
  clock?: Clock;
  /** process_* and nodejs_* gauges (off for a second registry in the same process). */
  processMetrics?: boolean;
}

export class ConnectMetrics {
  readonly registry = new Registry();
  readonly worker = new WorkerMetrics();
  readonly rebalance: WorkerRebalanceMetrics;
  private readonly clock: Clock;
  private readonly tasks = new Map<string, TaskMetrics>();
  private readonly plugins: PluginMetricFamilies;
  private readonly sources: Array<() => Promise<string>> = [];

  constructor(options: ConnectMetricsOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.rebalance = new WorkerRebalanceMetrics(this.clock);
    this.plugins = new PluginMetricFamilies(this.registry);
    this.registerWorkerMetrics();
    this.registerRebalanceMetrics();
    this.registerTaskMetrics();
    this.registerConsumerLag();
    if (options.processMetrics !== false) registerProcessMetrics(this.registry);
  }

  /** A task this worker starts: its metric objects, shown until removeTask. */
  addTask(id: ConnectorTaskId, type: 'source' | 'sink'): TaskMetrics {
    this.removeTask(id);
    const connectorTask = new ConnectorTaskMetrics(this.clock);
    const errors = new TaskErrorMetrics(this.clock);
    const entry: TaskMetrics = {
      id,
      labels: { connector: id.connector, task: String(id.task) },
      connectorTask,
      errors,
      source: type === 'source' ? new SourceTaskMetrics(connectorTask, this.clock) : null,
      sink: type === 'sink' ? new SinkTaskMetrics(connectorTask, this.clock) : null,
      plugin: this.plugins.forTask(id.connector, id.task),
    };
    this.tasks.set(taskKey(id), entry);
    return entry;
  }

  task(id: ConnectorTaskId): TaskMetrics | undefined {
    return this.tasks.get(taskKey(id));
  }

  /** The task stopped on this worker: its series (plugin ones included) go. */
  removeTask(id: ConnectorTaskId): void {
    const key = taskKey(id);
    const entry = this.tasks.get(key);
    if (entry === undefined) return;
    this.tasks.delete(key);
    entry.plugin.close();
  }

  /**
   * `inner` with task states also recorded here (connector-task-metrics status and
   * ratios, the per-connector counts by state). Only tasks added are tracked.
   */
  statusListener(inner: StatusListener): StatusListener {
    return {
      connectorState: (connector, state, trace) => inner.connectorState(connector, state, trace),
      taskState: (id, state, trace) => {
        this.tasks.get(taskKey(id))?.connectorTask.recordState(state);
        inner.taskState(id, state, trace);
      },
      connectorDeleted: (connector) => inner.connectorDeleted?.(connector),
      topicUsed: (connector, topic) => inner.topicUsed?.(connector, topic),
    };
  }

  /** Another exposition to append to every scrape (e.g. the embedded broker's). */
  addSource(source: () => Promise<string>): void {
    this.sources.push(source);
  }

  /** The whole exposition: this registry, then each source (one that fails is left out). */
  async scrape(): Promise<string> {
    await this.refreshConsumerLag();
    const parts = [await this.registry.metrics()];
    const extra = await Promise.all(this.sources.map((s) => s().catch(() => '')));
    for (const text of extra)
      if (text.trim() !== '') parts.push(text.endsWith('\n') ? text : `${text}\n`);
    return parts.join('\n');
  }

  private family(
    group: string,
    attr: string,
    type: MetricType,
    help: string,
    collect: () => Iterable<Sample>,
  ): void {
    LazyMetric.register(this.registry, { name: metricName(group, attr), help, type }, collect);
  }

  private registerWorkerMetrics(): void {
    const w = this.worker;
    const g = 'connect-worker-metrics';
    const one = (attr: string, type: MetricType, help: string, read: () => number) =>
      this.family(g, attr, type, help, () => [{ labels: {}, value: read() }]);
    const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
    one('connector-count', 'gauge', 'Connectors run in this worker.', () =>
      w.view.connectorCount(),
    );
    one('task-count', 'gauge', 'Tasks run in this worker.', () => w.view.taskCount());
    one(
      'connector-startup-attempts-total',
      'counter',
      'Connector startups this worker has attempted.',
      () => w.connectorStartupAttempts,
    );
    one(
      'connector-startup-success-total',
      'counter',
      'Connector starts that succeeded.',
      () => w.connectorStartupSuccesses,
    );
    one(
      'connector-startup-failure-total',
      'counter',
      'Connector starts that failed.',
      () => w.connectorStartupFailures,
    );
    one(
      'connector-startup-success-percentage',
      'gauge',
      'Fraction of connector starts that succeeded.',
      () => ratio(w.connectorStartupSuccesses, w.connectorStartupAttempts),
    );
    one(
      'connector-startup-failure-percentage',
      'gauge',
      'Fraction of connector starts that failed.',
      () => ratio(w.connectorStartupFailures, w.connectorStartupAttempts),
    );
    one(
      'task-startup-attempts-total',
      'counter',
      'Task startups this worker has attempted.',
      () => w.taskStartupAttempts,
    );
    one(
      'task-startup-success-total',
      'counter',
      'Task starts that succeeded.',
      () => w.taskStartupSuccesses,
    );
    one(
      'task-startup-failure-total',
      'counter',
      'Task starts that failed.',
      () => w.taskStartupFailures,
    );
    one('task-startup-success-percentage', 'gauge', 'Fraction of task starts that succeeded.', () =>
      ratio(w.taskStartupSuccesses, w.taskStartupAttempts),
    );
    one('task-startup-failure-percentage', 'gauge', 'Fraction of task starts that failed.', () =>
      ratio(w.taskStartupFailures, w.taskStartupAttempts),
    );
    // Per connector: its tasks on this worker by state (Kafka's connector-*-task-count).
    const byState = (state: ConnectorState | null) => () => {
      const counts = new Map<string, number>();
      for (const t of this.tasks.values()) {
        const n = counts.get(t.id.connector) ?? 0;
        counts.set(t.id.connector, state === null || t.connectorTask.state === state ? n + 1 : n);
      }
      return [...counts].map(([connector, value]) => ({ labels: { connector }, value }));
    };
    this.family(
      g,
      'connector-total-task-count',
      'gauge',
      'Tasks of the connector run in this worker.',
      byState(null),
    );
    for (const state of TASK_STATES) {
      const attr = `connector-${state.toLowerCase()}-task-count`;
      this.family(
        g,
        attr,
        'gauge',
        `Tasks of the connector in this worker in state ${state}.`,
        byState(state),
      );
    }
  }

  private registerRebalanceMetrics(): void {
    const r = this.rebalance;
    const g = 'connect-worker-rebalance-metrics';
    const one = (attr: string, type: MetricType, help: string, read: () => number) =>
      this.family(g, attr, type, help, () => [{ labels: {}, value: read() }]);
    one(
      'completed-rebalances-total',
      'counter',
      'Rebalances completed by this worker.',
      () => r.completedRebalances,
    );
    one(
      'epoch',
      'gauge',
      'Generation of the group this worker last joined (-1: none).',
      () => r.epoch,
    );
    one('rebalancing', 'gauge', 'Whether this worker is rebalancing (1) or not (0).', () =>
      r.rebalancing ? 1 : 0,
    );
    one(
      'rebalance-avg-time-ms',
      'gauge',
      'Average time in milliseconds this worker spent rebalancing.',
      () => r.rebalanceTime.avg(),
    );
    one(
      'rebalance-max-time-ms',
      'gauge',
      'Maximum time in milliseconds this worker spent rebalancing.',
      () => r.rebalanceTime.maxValue(),
    );
    one(
      'time-since-last-rebalance-ms',
      'gauge',
      'Milliseconds since this worker completed its last rebalance (+Inf: none yet).',
      () => r.timeSinceLastRebalanceMs(),
    );
    // Kafka's string attributes leader-name and connect-protocol, as an info series.
    this.family(g, 'info', 'gauge', 'The group leader and protocol of the last rebalance.', () =>
      r.completedRebalances === 0
        ? []
        : [{ labels: { leader_name: r.leaderName, connect_protocol: r.protocol }, value: 1 }],
    );
  }

  /** Sink tasks' end offsets, asked of the broker for this scrape (consumer-lag.ts). */
  private async refreshConsumerLag(): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const t of this.tasks.values()) {
      const lag = t.sink?.lag;
      if (lag != null) pending.push(lag.refresh());
    }
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, REFRESH_TIMEOUT_MS);
    });
    await Promise.race([Promise.all(pending), timeout]);
    clearTimeout(timer);
  }

  private registerConsumerLag(): void {
    LazyMetric.register(
      this.registry,
      {
        name: RECORDS_LAG,
        type: 'gauge',
        help: "Records between a sink task's position and the end of the partition (read when scraped).",
      },
      () => {
        const out: Sample[] = [];
        for (const t of this.tasks.values()) {
          const lag = t.sink?.lag;
          if (lag == null) continue;
          for (const p of lag.samples())
            out.push({
              labels: {
                ...t.labels,
                client_id: lag.clientId,
                topic: p.topic,
                partition: p.partition,
              },
              value: p.lag,
            });
        }
        return out;
      },
    );
  }

  private registerTaskMetrics(): void {
    this.family(
      'connector-task-metrics',
      'status',
      'gauge',
      "The task's status (1 for the status label it has).",
      () =>
        [...this.tasks.values()].map((t) => ({
          labels: { ...t.labels, status: t.connectorTask.state.toLowerCase() },
          value: 1,
        })),
    );
    for (const [group, attr, type, help, read] of TASK_METRICS) {
      this.family(group, attr, type, help, () => {
        const out: Sample[] = [];
        for (const t of this.tasks.values()) {
          const value = read(t);
          if (value !== undefined) out.push({ labels: t.labels, value });
        }
        return out;
      });
    }
  }
}

/** The JMX exporter's name of Kafka's consumer-fetch-manager-metrics records-lag. */
export const RECORDS_LAG = 'kafka_consumer_consumer_fetch_manager_metrics_records_lag';

function taskKey(id: ConnectorTaskId): string {
  return `${id.connector}\u0000${id.task}`;
}

/** The process gauges prom-client's default metrics name, read at scrape (no timers). */
export function registerProcessMetrics(registry: Registry): void {
  for (const g of PROCESS_GAUGES)
    LazyMetric.register(registry, { name: g.name, help: g.help, type: g.type }, () => [
      { labels: {}, value: g.read() },
    ]);
}
