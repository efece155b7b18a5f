import { describe, expect, it } from 'vitest';
import { ConnectMetrics, metricName } from '../../../src/connect/metrics/connect-metrics.ts';
import type { StatusListener } from '../../../src/connect/runtime/status-listener.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

const quiet: StatusListener = { connectorState: () => {}, taskState: () => {} };

async function scrape(metrics: ConnectMetrics) {
  return parsePrometheusText(await metrics.scrape());
}

describe('ConnectMetrics', () => {
  it('names metrics as the JMX exporter names Kafka Connect MBean attributes', () => {
    expect(metricName('sink-task-metrics', 'sink-record-read-total')).toBe(
      'kafka_connect_sink_task_metrics_sink_record_read_total',
    );
    expect(metricName('connect-worker-rebalance-metrics', 'rebalance-avg-time-ms')).toBe(
      'kafka_connect_connect_worker_rebalance_metrics_rebalance_avg_time_ms',
    );
  });

  it('exposes sink task counts labelled by connector and task, with their types', async () => {
    const clock = new ManualClock(1_000);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    const task = metrics.addTask({ connector: 'lake', task: 0 }, 'sink');
    task.sink!.view = { partitionCount: () => 3, activeRecords: () => 7 };
    task.sink!.recordRead(10);
    task.sink!.recordPut(9, 4);
    task.sink!.recordRead(5);
    task.sink!.recordPut(5, 8);
    task.sink!.recordOffsetCommitCompleted(2);
    task.sink!.recordOffsetCommitSkipped(1);
    const f = await scrape(metrics);
    const labels = { connector: 'lake', task: '0' };
    const m = (g: string, a: string) => sampleOf(f, metricName(g, a), labels);
    expect(m('sink-task-metrics', 'sink-record-read-total')).toBe(15);
    expect(m('sink-task-metrics', 'sink-record-send-total')).toBe(14);
    expect(m('sink-task-metrics', 'put-batch-avg-time-ms')).toBe(6);
    expect(m('sink-task-metrics', 'put-batch-max-time-ms')).toBe(8);
    expect(m('sink-task-metrics', 'partition-count')).toBe(3);
    expect(m('sink-task-metrics', 'sink-record-active-count')).toBe(7);
    expect(m('sink-task-metrics', 'offset-commit-completion-total')).toBe(1);
    expect(m('sink-task-metrics', 'offset-commit-skip-total')).toBe(1);
    expect(m('sink-task-metrics', 'offset-commit-seq-no')).toBe(2);
    expect(m('connector-task-metrics', 'batch-size-max')).toBe(9);
    expect(m('connector-task-metrics', 'offset-commit-success-percentage')).toBe(0.5);
    expect(f.get(metricName('sink-task-metrics', 'sink-record-read-total'))?.type).toBe('counter');
    expect(f.get(metricName('sink-task-metrics', 'partition-count'))?.type).toBe('gauge');
    // A sink task has no source series.
    expect(f.get(metricName('source-task-metrics', 'source-record-poll-total'))?.samples).toEqual(
      [],
    );
  });

  it('tracks task status, running ratio and per-connector counts by state from the status reports', async () => {
    const clock = new ManualClock(0);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    const status = metrics.statusListener(quiet);
    metrics.addTask({ connector: 'cdc', task: 0 }, 'source');
    metrics.addTask({ connector: 'cdc', task: 1 }, 'source');
    status.taskState({ connector: 'cdc', task: 0 }, 'RUNNING');
    status.taskState({ connector: 'cdc', task: 1 }, 'RUNNING');
    clock.advance(300);
    status.taskState({ connector: 'cdc', task: 1 }, 'PAUSED');
    clock.advance(100);
    const f = await scrape(metrics);
    const t1 = { connector: 'cdc', task: '1' };
    expect(sampleOf(f, metricName('connector-task-metrics', 'status'), t1)).toBe(1);
    expect(
      f
        .get(metricName('connector-task-metrics', 'status'))!
        .samples.find((s) => s.labels.task === '1')?.labels.status,
    ).toBe('paused');
    expect(sampleOf(f, metricName('connector-task-metrics', 'running-ratio'), t1)).toBe(0.75);
    expect(sampleOf(f, metricName('connector-task-metrics', 'pause-ratio'), t1)).toBe(0.25);
    const g = 'connect-worker-metrics';
    expect(sampleOf(f, metricName(g, 'connector-running-task-count'), { connector: 'cdc' })).toBe(
      1,
    );
    expect(sampleOf(f, metricName(g, 'connector-paused-task-count'), { connector: 'cdc' })).toBe(1);
    expect(sampleOf(f, metricName(g, 'connector-total-task-count'), { connector: 'cdc' })).toBe(2);
  });

  it('counts source polls, writes and offset commits through the API source tasks call', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const { source } = metrics.addTask({ connector: 'gen', task: 0 }, 'source');
    source!.recordPoll(100, 3);
    source!.recordPoll(0, 1);
    source!.recordWrite(100);
    source!.recordOffsetCommit(true, 5);
    source!.recordOffsetCommit(false, 7);
    const f = await scrape(metrics);
    const labels = { connector: 'gen', task: '0' };
    expect(sampleOf(f, metricName('source-task-metrics', 'source-record-poll-total'), labels)).toBe(
      100,
    );
    expect(
      sampleOf(f, metricName('source-task-metrics', 'source-record-write-total'), labels),
    ).toBe(100);
    expect(sampleOf(f, metricName('source-task-metrics', 'poll-batch-avg-time-ms'), labels)).toBe(
      2,
    );
    expect(
      sampleOf(f, metricName('connector-task-metrics', 'offset-commit-max-time-ms'), labels),
    ).toBe(7);
    expect(
      sampleOf(f, metricName('connector-task-metrics', 'offset-commit-failure-percentage'), labels),
    ).toBe(0.5);
  });

  it('shows transaction-size-avg, -min and -max for exactly-once source tasks only', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const eos = metrics.addTask({ connector: 'cdc', task: 0 }, 'source').source!;
    metrics.addTask({ connector: 'cdc', task: 1 }, 'source').source!.recordTransaction(9);
    eos.trackTransactions();
    let f = await scrape(metrics);
    const name = (a: string) => metricName('source-task-metrics', a);
    const eosLabels = { connector: 'cdc', task: '0' };
    // No transaction committed yet: NaN, as Kafka's Avg, Min and Max without samples.
    expect(sampleOf(f, name('transaction-size-avg'), eosLabels)).toBeNaN();
    eos.recordTransaction(4);
    eos.recordTransaction(10);
    eos.recordTransaction(0);
    f = await scrape(metrics);
    expect(sampleOf(f, name('transaction-size-min'), eosLabels)).toBe(0);
    expect(sampleOf(f, name('transaction-size-max'), eosLabels)).toBe(10);
    expect(sampleOf(f, name('transaction-size-avg'), eosLabels)).toBeCloseTo(14 / 3);
    // The at-least-once task has no such series.
    const tasks = f.get(name('transaction-size-max'))?.samples.map((s) => s.labels.task);
    expect(tasks).toEqual(['0']);
  });

  it('counts errors, retries and dead letter queue writes in task-error-metrics', async () => {
    const clock = new ManualClock(5_000);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    const { errors } = metrics.addTask({ connector: 's', task: 2 }, 'sink');
    errors.recordRetry();
    errors.recordError();
    errors.recordErrorLogged();
    errors.recordDeadLetterQueueProduceRequest();
    errors.recordDeadLetterQueueProduceFailure();
    errors.skippedRecords = () => 4;
    const f = await scrape(metrics);
    const labels = { connector: 's', task: '2' };
    const m = (a: string) => sampleOf(f, metricName('task-error-metrics', a), labels);
    expect(m('total-record-errors')).toBe(1);
    expect(m('total-record-failures')).toBe(2);
    expect(m('total-retries')).toBe(1);
    expect(m('total-records-skipped')).toBe(4);
    expect(m('total-errors-logged')).toBe(1);
    expect(m('deadletterqueue-produce-requests')).toBe(1);
    expect(m('deadletterqueue-produce-failures')).toBe(1);
    expect(m('last-error-timestamp')).toBe(5_000);
  });

  it("drops a task's series, its plugin metrics included, when the task is removed", async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const id = { connector: 'gone', task: 0 };
    const { plugin } = metrics.addTask(id, 'sink');
    plugin.counter({ name: 'parquet_sink_files_written_total', help: 'Files.' }).inc();
    metrics.removeTask(id);
    const text = await metrics.scrape();
    expect(text).not.toContain('connector="gone"');
    expect(parsePrometheusText(text).get('parquet_sink_files_written_total')?.samples).toEqual([]);
  });

  it('reports worker startups and rebalances', async () => {
    const clock = new ManualClock(0);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    metrics.worker.view = { connectorCount: () => 2, taskCount: () => 3 };
    metrics.worker.recordConnectorStartup(true);
    metrics.worker.recordConnectorStartup(false);
    metrics.worker.recordTaskStartup(true);
    metrics.worker.recordTaskStartup(undefined);
    let f = await scrape(metrics);
    const r = 'connect-worker-rebalance-metrics';
    expect(sampleOf(f, metricName(r, 'time-since-last-rebalance-ms'))).toBe(
      Number.POSITIVE_INFINITY,
    );
    metrics.rebalance.rebalanceStarted();
    clock.advance(40);
    metrics.rebalance.rebalanceCompleted(7, 'http://w1:8083/', 'sessioned');
    clock.advance(10);
    f = await scrape(metrics);
    const w = 'connect-worker-metrics';
    expect(sampleOf(f, metricName(w, 'connector-count'))).toBe(2);
    expect(sampleOf(f, metricName(w, 'task-count'))).toBe(3);
    expect(sampleOf(f, metricName(w, 'connector-startup-attempts-total'))).toBe(2);
    expect(sampleOf(f, metricName(w, 'connector-startup-failure-percentage'))).toBe(0.5);
    expect(sampleOf(f, metricName(w, 'task-startup-attempts-total'))).toBe(2);
    expect(sampleOf(f, metricName(w, 'task-startup-success-total'))).toBe(1);
    expect(sampleOf(f, metricName(r, 'completed-rebalances-total'))).toBe(1);
    expect(sampleOf(f, metricName(r, 'epoch'))).toBe(7);
    expect(sampleOf(f, metricName(r, 'rebalance-max-time-ms'))).toBe(40);
    expect(sampleOf(f, metricName(r, 'time-since-last-rebalance-ms'))).toBe(10);
    expect(sampleOf(f, metricName(r, 'rebalancing'))).toBe(0);
    expect(sampleOf(f, metricName(r, 'info'), { connect_protocol: 'sessioned' })).toBe(1);
  });

  it('appends other sources (the embedded broker) and survives one that fails', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0) });
    metrics.addSource(async () => '# HELP b_total B.\n# TYPE b_total counter\nb_total 3\n');
    metrics.addSource(() => Promise.reject(new Error('thread gone')));
    const f = await scrape(metrics);
    expect(sampleOf(f, 'b_total')).toBe(3);
    expect(f.has('process_resident_memory_bytes')).toBe(true);
  });
});

describe('plugin metrics', () => {
  it('label every series with connector and task and share a family across tasks', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const a = metrics.addTask({ connector: 'cdc', task: 0 }, 'source').plugin;
    const b = metrics.addTask({ connector: 'cdc', task: 1 }, 'source').plugin;
    const spec = { name: 'debezium_metrics_totalnumberofeventsseen', help: 'Events seen.' };
    a.counter({ ...spec, labels: { context: 'streaming' } }).inc(5);
    b.counter({ ...spec, labels: { context: 'streaming' } }).inc();
    let lag = 12;
    a.gaugeOf({ name: 'debezium_metrics_millisecondsbehindsource', help: 'Lag.' }, () => lag);
    lag = 30;
    const f = await scrape(metrics);
    const seen = { connector: 'cdc', context: 'streaming' };
    expect(sampleOf(f, spec.name, { ...seen, task: '0' })).toBe(5);
    expect(sampleOf(f, spec.name, { ...seen, task: '1' })).toBe(1);
    expect(sampleOf(f, 'debezium_metrics_millisecondsbehindsource', { task: '0' })).toBe(30);
  });

  it('refuse runtime names, runtime labels and a family redefined with another type', () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const p = metrics.addTask({ connector: 'x', task: 0 }, 'sink').plugin;
    expect(() => p.counter({ name: 'kafka_connect_mine', help: '' })).toThrow(
      /belong to the runtime/,
    );
    expect(() => p.counter({ name: 'bad-name', help: '' })).toThrow(/invalid metric name/);
    expect(() => p.gauge({ name: 'ok', help: '', labels: { task: '1' } })).toThrow(
      /set by the runtime/,
    );
    p.counter({ name: 'bullmq_sink_jobs_added_total', help: 'Jobs.' });
    expect(() => p.gauge({ name: 'bullmq_sink_jobs_added_total', help: 'Jobs.' })).toThrow(
      /is a counter/,
    );
  });
});
