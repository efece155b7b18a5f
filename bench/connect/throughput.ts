/**
 * Connect runtime throughput (issue 5): records/s from the datagen source through a
 * WorkerSourceTask into the embedded broker, and from the broker through a
 * WorkerSinkTask into a null sink, for ~100-byte and ~1 KiB record values, each next to
 * a bare kafkajs producer or consumer moving the same number of records of the same
 * size in the same run. The ratio runtime/bare is the runtime's overhead (transforms,
 * converters, offset tracking; for the source also generating the records and JSON
 * conversion, which a bare producer does not do).
 *
 * The broker runs on its own thread (as in `connect standalone`); the worker, the
 * bare clients and the measurement run on the main thread. Completion is measured
 * from outside: the topic's end offsets for sources, the null sink's count for sinks.
 * Sources are timed from a connected producer on, sinks from the first record
 * delivered (group joins excluded), for the bare clients and the runtime alike.
 *
 * Run: npx tsx bench/connect/throughput.ts [records-100B] [records-1KiB]
 * Prints `name: value unit` lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel, Partitioners } from 'kafkajs';
import { valueFor } from '../../connectors/datagen/datagen-record.ts';
import { startBrokerThread } from '../../src/broker/broker-thread.ts';
import { loadConfig } from '../../src/config/load.ts';
import { standaloneWorkerDefs, workerPassthroughPrefixes } from '../../src/config/worker-config.ts';
import { definePlugins, type SinkRecord } from '../../src/connect/api/index.ts';
import { JsonConverter } from '../../src/connect/converters/json-converter.ts';
import { loadPlugins } from '../../src/connect/runtime/plugins.ts';
import { Worker } from '../../src/connect/runtime/worker.ts';
import { MemoryOffsetBackingStore } from '../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../src/util/logger.ts';

const COUNTS: Record<number, number> = {
  100: Number(process.argv[2] ?? 100_000),
  1024: Number(process.argv[3] ?? 30_000),
};
const BATCH = 1000;

/** Records the null sink has been handed, by topic, and when the first one came. */
const received = new Map<string, number>();
const firstAt = new Map<string, number>();
const nullSink = definePlugins({
  type: 'sink',
  className: 'bench.NullSinkConnector',
  version: '1',
  configDefs: [],
  createConnector: () => ({
    version: () => '1',
    start() {},
    taskConfigs: () => [{}],
    stop() {},
  }),
  createTask: () => ({
    version: () => '1',
    start() {},
    put(records: readonly SinkRecord[]) {
      for (const r of records) {
        if (!firstAt.has(r.topic)) firstAt.set(r.topic, performance.now());
        received.set(r.topic, (received.get(r.topic) ?? 0) + 1);
      }
    },
    stop() {},
  }),
});

async function waitUntil(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

async function endOffset(admin: Admin, topic: string): Promise<number> {
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  } catch {
    return 0;
  }
}

function line(name: string, value: number, unit: string): void {
  console.log(
    `${name}: ${Number.isInteger(value) ? value : value.toFixed(value < 10 ? 2 : 0)} ${unit}`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'connect-bench-'));
const broker = await startBrokerThread({
  host: '127.0.0.1',
  port: 0,
  dataDir: join(dir, 'broker'),
  nodeId: 1,
  config: { 'offsets.topic.num.partitions': 4, 'group.initial.rebalance.delay.ms': 0 },
});
const bootstrap = `127.0.0.1:${broker.port}`;
const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();

const loaded = loadConfig({
  defs: standaloneWorkerDefs,
  env: {},
  envPrefix: 'BENCH_',
  options: [
    `bootstrap.servers=${bootstrap}`,
    'key.converter=org.apache.kafka.connect.storage.StringConverter',
    'value.converter=org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable=false',
    'offset.flush.interval.ms=1000',
  ],
  passthroughPrefixes: workerPassthroughPrefixes,
});
const logger = getLogger('bench.connect');
const plugins = await loadPlugins({ pluginPath: loaded.values['plugin.path'] as string[], logger });
plugins.add(nullSink, 'bench');
const worker = new Worker({
  workerId: 'bench:0',
  config: loaded.values,
  plugins,
  offsetStore: new MemoryOffsetBackingStore(),
  status: { connectorState() {}, taskState() {} },
  logger,
});
await worker.start();

/** The JSON value of a datagen record with an empty payload, to size payloads exactly. */
const json = new JsonConverter();
json.configure({ 'schemas.enable': 'false' }, false);
const baseSize = json.fromConnectData('t', null, valueFor(0, Date.now(), ''))?.length ?? 0;

try {
  for (const size of [100, 1024]) {
    const n = COUNTS[size] as number;
    const label = size === 100 ? '100B' : '1KiB';
    const payload = 'x'.repeat(Math.max(0, size - baseSize));
    const value = Buffer.alloc(size, 'x');

    // Bare producer: batches of BATCH records, one request at a time, idempotent acks=all.
    const bareTopic = `bare-${label}`;
    await admin.createTopics({ topics: [{ topic: bareTopic, numPartitions: 1 }] });
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    let t0 = performance.now();
    for (let i = 0; i < n; i += BATCH) {
      const messages = Array.from({ length: Math.min(BATCH, n - i) }, (_, k) => ({
        key: `key-${(i + k) % 1000}`,
        value,
      }));
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic: bareTopic, messages }] });
    }
    const bareProduce = n / ((performance.now() - t0) / 1000);
    await producer.disconnect();

    // Runtime source: datagen -> WorkerSourceTask -> broker, until the topic holds n records.
    const srcTopic = `datagen-${label}`;
    await admin.createTopics({ topics: [{ topic: srcTopic, numPartitions: 1 }] });
    const srcConfig = {
      name: `src-${label}`,
      'connector.class': 'connect.datagen.DatagenConnector',
      topic: srcTopic,
      iterations: String(n),
      'records.per.second': '0',
      'record.size': String(payload.length),
      'batch.size': String(BATCH),
    };
    await worker.startConnector(srcConfig.name, srcConfig, 'RUNNING', () => {});
    const [srcTask] = await worker.connectorTaskConfigs(srcConfig.name, srcConfig);
    // From the moment the task's producer is connected, as for the bare producer.
    t0 = performance.now();
    await worker.startTask(
      { connector: srcConfig.name, task: 0 },
      srcConfig,
      srcTask ?? {},
      'RUNNING',
    );
    await waitUntil(async () => (await endOffset(admin, srcTopic)) >= n);
    const runtimeProduce = n / ((performance.now() - t0) / 1000);
    await worker.stopTasks([{ connector: srcConfig.name, task: 0 }]);
    await worker.stopConnector(srcConfig.name);

    // Bare consumer of the bare topic, from the beginning.
    const consumer = kafka.consumer({ groupId: `bare-${label}` });
    await consumer.connect();
    await consumer.subscribe({ topics: [bareTopic], fromBeginning: true });
    // Sinks are timed from the first record delivered (group join excluded) to the last.
    let consumed = 0;
    let first = 0;
    await consumer.run({
      eachBatch: async ({ batch }) => {
        if (consumed === 0) first = performance.now();
        consumed += batch.messages.length;
      },
    });
    await waitUntil(() => consumed >= n);
    const bareConsume = n / ((performance.now() - first) / 1000);
    await consumer.disconnect();

    // Runtime sink of the same topic into the null sink (ByteArrayConverter: no parsing).
    const sinkConfig = {
      name: `sink-${label}`,
      'connector.class': 'bench.NullSinkConnector',
      topics: bareTopic,
      'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
    };
    await worker.startConnector(sinkConfig.name, sinkConfig, 'RUNNING', () => {});
    await worker.startTask({ connector: sinkConfig.name, task: 0 }, sinkConfig, {}, 'RUNNING');
    await waitUntil(() => (received.get(bareTopic) ?? 0) >= n);
    const runtimeConsume = n / ((performance.now() - (firstAt.get(bareTopic) as number)) / 1000);
    await worker.stopTasks([{ connector: sinkConfig.name, task: 0 }]);
    await worker.stopConnector(sinkConfig.name);

    line(`source_${label}_bare_kafkajs_producer`, bareProduce, 'records/s');
    line(`source_${label}_runtime_datagen`, runtimeProduce, 'records/s');
    line(`source_${label}_runtime_vs_bare`, runtimeProduce / bareProduce, 'x');
    line(`sink_${label}_bare_kafkajs_consumer`, bareConsume, 'records/s');
    line(`sink_${label}_runtime_null_sink`, runtimeConsume, 'records/s');
    line(`sink_${label}_runtime_vs_bare`, runtimeConsume / bareConsume, 'x');
  }
} finally {
  await worker.stop();
  await admin.disconnect();
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
}
