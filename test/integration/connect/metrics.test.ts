/**
 * GET /metrics end to end: a standalone worker runs a file source into a file sink
 * against the embedded broker on its own thread (as `connect standalone` runs it), and
 * the worker's /metrics, read by a strict Prometheus text parser, shows Kafka
 * Connect's metric groups with their names and labels, counts equal to the records
 * sent, and the broker thread's metrics beside them. Then a distributed worker's
 * rebalance metrics, and the broker's own metrics.listener (what `connect broker`
 * serves).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startBroker } from '../../../src/broker/broker.ts';
import { startBrokerThread } from '../../../src/broker/broker-thread.ts';
import { loadConfig } from '../../../src/config/load.ts';
import {
  distributedWorkerDefs,
  workerPassthroughPrefixes,
} from '../../../src/config/worker-config.ts';
import { startDistributedWorker } from '../../../src/connect/herder/distributed-worker.ts';
import { metricName } from '../../../src/connect/metrics/connect-metrics.ts';
import { freePort } from '../../helpers/ports.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  type ParsedFamily,
  parsePrometheusText,
  sampleOf,
} from '../../unit/metrics/prometheus-text.ts';
import {
  fileLines,
  testPluginPath,
  useStandalone,
  waitFor,
  workerConfig,
} from '../standalone/standalone-helpers.ts';

const RECORDS = 200;

/** Test broker keys: few offsets partitions, no first-rebalance delay (quick start). */
const brokerConfig = {
  'log.cleaner.backoff.ms': 1000,
  'offsets.topic.num.partitions': 4,
  'group.initial.rebalance.delay.ms': 0,
};

async function scrape(
  url: string,
): Promise<{ type: string | null; families: Map<string, ParsedFamily> }> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return {
    type: response.headers.get('content-type'),
    families: parsePrometheusText(await response.text()),
  };
}

describe('GET /metrics', () => {
  it("shows a file pipeline's records in the Connect groups and the embedded broker's metrics beside them", async () => {
    const dir = useTmpDir();
    const broker = await startBrokerThread({
      host: '127.0.0.1',
      port: 0,
      dataDir: join(dir, 'broker'),
      nodeId: 1,
      config: brokerConfig,
    });
    onTestFinished(() => broker.stop());
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    writeFileSync(input, Array.from({ length: RECORDS }, (_, i) => `line ${i}\n`).join(''));
    const worker = await useStandalone(workerConfig(`127.0.0.1:${broker.port}`, dir), [
      {
        name: 'src',
        config: { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' },
      },
      {
        name: 'snk',
        config: { 'connector.class': 'FileStreamSink', file: output, topics: 'lines' },
      },
    ]);
    // The worker above was made without the broker's source; add it as the CLI does.
    worker.worker.metrics.addSource(() => broker.metrics?.() ?? Promise.resolve(''));
    await waitFor(`${RECORDS} lines written out`, () =>
      fileLines(output).length >= RECORDS ? true : undefined,
    );
    const sink = { connector: 'snk', task: '0' };
    const url = `${worker.restUrl}/metrics`;
    // The sink's counts follow its put; the commit of its offsets, the interval (200 ms).
    const { type, families: f } = await waitFor('the sink offsets committed', async () => {
      const s = await scrape(url);
      return sampleOf(
        s.families,
        metricName('sink-task-metrics', 'offset-commit-completion-total'),
        sink,
      ) > 0
        ? s
        : undefined;
    });
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8');

    const m = (group: string, attr: string, labels: Record<string, string> = {}) =>
      sampleOf(f, metricName(group, attr), labels);
    expect(m('sink-task-metrics', 'sink-record-read-total', sink)).toBe(RECORDS);
    expect(m('sink-task-metrics', 'sink-record-send-total', sink)).toBe(RECORDS);
    expect(m('sink-task-metrics', 'partition-count', sink)).toBe(1);
    expect(m('sink-task-metrics', 'put-batch-max-time-ms', sink)).toBeGreaterThanOrEqual(0);
    expect(m('connector-task-metrics', 'batch-size-max', sink)).toBeGreaterThan(0);
    expect(m('task-error-metrics', 'total-record-errors', sink)).toBe(0);
    for (const task of [sink, { connector: 'src', task: '0' }]) {
      const status = f
        .get(metricName('connector-task-metrics', 'status'))!
        .samples.find((s) => s.labels.connector === task.connector);
      expect(status).toMatchObject({ labels: { ...task, status: 'running' }, value: 1 });
    }
    // The source task's series exist with its labels (the runner feeds them: see the report).
    expect(() =>
      m('source-task-metrics', 'source-record-poll-total', { connector: 'src', task: '0' }),
    ).not.toThrow();
    expect(m('connect-worker-metrics', 'connector-count')).toBe(2);
    expect(m('connect-worker-metrics', 'task-count')).toBe(2);
    expect(m('connect-worker-metrics', 'task-startup-success-total')).toBe(2);
    expect(m('connect-worker-metrics', 'connector-running-task-count', { connector: 'snk' })).toBe(
      1,
    );

    // The broker thread's registry, asked on the scrape.
    const topic = { topic: 'lines' };
    expect(sampleOf(f, 'kafka_server_brokertopicmetrics_messagesin_total', topic)).toBe(RECORDS);
    expect(
      sampleOf(f, 'kafka_server_brokertopicmetrics_messagesout_total', topic),
    ).toBeGreaterThanOrEqual(RECORDS);
    expect(sampleOf(f, 'kafka_server_brokertopicmetrics_bytesin_total', topic)).toBeGreaterThan(0);
    expect(sampleOf(f, 'kafka_log_log_size', { topic: 'lines', partition: '0' })).toBeGreaterThan(
      0,
    );
    const produce = { request: 'Produce' };
    const produced = sampleOf(f, 'kafka_network_requestmetrics_requests_total', produce);
    expect(produced).toBeGreaterThan(0);
    const name = 'kafka_network_requestmetrics_totaltimems';
    expect(sampleOf(f, name, { ...produce, le: '+Inf' }, `${name}_bucket`)).toBe(produced);
    expect(sampleOf(f, 'kafka_server_socket_server_metrics_connection_count')).toBeGreaterThan(0);
    expect(
      sampleOf(f, 'kafka_coordinator_group_groupmetadatamanager_numgroupsstable'),
    ).toBeGreaterThanOrEqual(1);
    // One process: its gauges once, from the worker's registry.
    expect(f.get('process_resident_memory_bytes')?.samples).toHaveLength(1);
  });

  it("of a distributed worker counts its rebalances and carries the broker thread's metrics", async () => {
    const dir = useTmpDir();
    const broker = await startBrokerThread({
      host: '127.0.0.1',
      port: 0,
      dataDir: join(dir, 'broker'),
      nodeId: 1,
      // Lets the worker use a short session timeout, so its first join is quick.
      config: { ...brokerConfig, 'group.min.session.timeout.ms': 500 },
    });
    onTestFinished(() => broker.stop());
    const loaded = loadConfig({
      defs: distributedWorkerDefs,
      env: {},
      envPrefix: 'CONNECT_',
      options: [
        `bootstrap.servers=127.0.0.1:${broker.port}`,
        `plugin.path=${testPluginPath}`,
        'listeners=http://127.0.0.1:0',
        'session.timeout.ms=3000',
        'heartbeat.interval.ms=300',
      ],
      passthroughPrefixes: workerPassthroughPrefixes,
    });
    expect(loaded.errors).toEqual([]);
    // As `connect worker` wires it: the broker thread's text joins each scrape.
    const worker = await startDistributedWorker({
      config: loaded.values,
      metricsSources: [() => broker.metrics?.() ?? Promise.resolve('')],
    });
    onTestFinished(() => worker.stop());
    const r = 'connect-worker-rebalance-metrics';
    const f = await waitFor('the first rebalance completed', async () => {
      const { families } = await scrape(`${worker.restUrl}/metrics`);
      return sampleOf(families, metricName(r, 'completed-rebalances-total')) >= 1
        ? families
        : undefined;
    });
    expect(sampleOf(f, metricName(r, 'epoch'))).toBeGreaterThanOrEqual(1);
    expect(sampleOf(f, metricName(r, 'rebalancing'))).toBe(0);
    expect(sampleOf(f, metricName(r, 'rebalance-max-time-ms'))).toBeGreaterThanOrEqual(0);
    expect(sampleOf(f, metricName(r, 'time-since-last-rebalance-ms'))).toBeLessThan(
      Number.POSITIVE_INFINITY,
    );
    expect(sampleOf(f, metricName(r, 'info'), { leader_name: worker.advertisedUrl })).toBe(1);
    expect(sampleOf(f, metricName('connect-worker-metrics', 'connector-count'))).toBe(0);
    // The broker thread's part: the internal topics and the worker's `connect` group.
    expect(sampleOf(f, 'kafka_server_replicamanager_partitioncount')).toBeGreaterThan(0);
    expect(sampleOf(f, 'kafka_coordinator_group_groupmetadatamanager_numgroupsstable')).toBe(1);
  });

  it('is served by the broker on metrics.listener, and nothing else there', async () => {
    const dir = useTmpDir();
    const port = await freePort();
    const broker = await startBroker({
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      nodeId: 1,
      config: { ...brokerConfig, 'metrics.listener': `http://127.0.0.1:${port}` },
    });
    onTestFinished(() => broker.stop());
    const { families } = await scrape(`http://127.0.0.1:${port}/metrics`);
    expect(sampleOf(families, 'kafka_server_replicamanager_partitioncount')).toBeGreaterThanOrEqual(
      0,
    );
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
  });
});
