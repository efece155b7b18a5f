/**
 * How WorkerSinkTask hands records to put, checked with a recording test plugin
 * against a real broker: in offset order and without gaps while it fetches the next
 * batch ahead, and empty (sink-task.ts: put "possibly empty, so a task can flush on
 * time") a few times a second when nothing comes, as Kafka Connect calls it after a
 * poll that returned nothing, but not while the connector is paused.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  definePlugins,
  type SinkRecord,
  type SinkTaskContext,
  type TaskConfig,
} from '../../../src/connect/api/index.ts';
import { loadPlugins } from '../../../src/connect/runtime/plugins.ts';
import { Worker } from '../../../src/connect/runtime/worker.ts';
import { MemoryOffsetBackingStore } from '../../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../../src/util/logger.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor, workerConfig } from './standalone-helpers.ts';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
});

afterAll(async () => {
  await broker?.stop();
});

/** What the recording sink saw, in call order: `put []`, `put 0,1`, `preCommit`. */
const calls: string[] = [];
/** Where the recording sink moves a partition (context.offset) once it was put `at`. */
let seekInPut: { at: number; to: number } | undefined;

const plugins = definePlugins({
  type: 'sink',
  className: 'test.DeliveryRecordingSink',
  version: '1',
  configDefs: [],
  createConnector: () => ({
    version: () => '1',
    start() {},
    taskConfigs: () => [{}],
    stop() {},
  }),
  createTask: () => {
    let context: SinkTaskContext | undefined;
    return {
      version: () => '1',
      start(_config: TaskConfig, ctx: SinkTaskContext) {
        context = ctx;
      },
      async put(records: readonly SinkRecord[]) {
        calls.push(
          `put ${records.length === 0 ? '[]' : records.map((r) => r.kafkaOffset).join(',')}`,
        );
        const seek = seekInPut;
        const hit = seek && records.find((r) => r.kafkaOffset === seek.at);
        if (seek && hit) {
          context?.offset([{ topic: hit.topic, partition: hit.kafkaPartition, offset: seek.to }]);
        }
        // Yield, as a sink writing somewhere would: the next batch arrives meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
      },
      preCommit() {
        calls.push('preCommit');
        return [];
      },
      stop() {},
    };
  },
});

async function startSink(
  topic: string,
  target: 'RUNNING' | 'PAUSED',
  workerKeys: Record<string, string> = {},
) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const registry = await loadPlugins({ pluginPath: [], logger: getLogger('test') });
  registry.add(plugins, 'test');
  const worker = new Worker({
    workerId: 'test:0',
    config: workerConfig(broker.bootstrap, useTmpDir(), {
      'offset.flush.interval.ms': '100',
      ...workerKeys,
    }),
    plugins: registry,
    offsetStore: new MemoryOffsetBackingStore(),
    status: { connectorState() {}, taskState() {} },
  });
  await worker.start();
  onTestFinished(() => worker.stop());
  const config = { 'connector.class': 'test.DeliveryRecordingSink', topics: topic };
  await worker.startConnector(topic, config, target, () => {});
  await worker.startTask({ connector: topic, task: 0 }, config, {}, target);
  return worker;
}

const count = (call: string) => calls.filter((c) => c === call).length;

describe('WorkerSinkTask delivery', () => {
  /** 600 records in many small record batches: each 8 KiB fetch returns a few of them. */
  async function produceOrdered(topic: string): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    for (let from = 0; from < 600; from += 10) {
      await producer.send({
        topic,
        messages: Array.from({ length: 10 }, (_, i) => ({ value: `${from + i}`.padEnd(200, '.') })),
      });
    }
    await producer.disconnect();
  }

  const putOffsets = () =>
    calls
      .filter((c) => c.startsWith('put ') && c !== 'put []')
      .flatMap((c) => c.slice(4).split(',').map(Number));

  // Batches of a few dozen records, each put in chunks of 7.
  const smallBatches = {
    'consumer.max.partition.fetch.bytes': '8192',
    'consumer.max.poll.records': '7',
  };

  it('puts every record once, in offset order, while fetching the next batch ahead', async () => {
    await produceOrdered('ordered');
    calls.length = 0;
    seekInPut = undefined;
    await startSink('ordered', 'RUNNING', smallBatches);
    await waitFor('600 records put', () => (putOffsets().length >= 600 ? true : undefined));
    expect(putOffsets()).toEqual(Array.from({ length: 600 }, (_, i) => i));
  });

  it('drops what was fetched ahead of a seek made in put, and puts from the new position on', async () => {
    await produceOrdered('sought');
    calls.length = 0;
    seekInPut = { at: 100, to: 400 };
    await startSink('sought', 'RUNNING', smallBatches);
    await waitFor('the records up to 599 put', () =>
      putOffsets().includes(599) ? true : undefined,
    );
    seekInPut = undefined;
    // The put holding 100 completes; nothing fetched before the seek follows it.
    const before = putOffsets().filter((o) => o < 400);
    const through = before[before.length - 1] as number;
    expect(through).toBeGreaterThanOrEqual(100);
    expect(through).toBeLessThan(107);
    expect(putOffsets()).toEqual([
      ...Array.from({ length: through + 1 }, (_, i) => i),
      ...Array.from({ length: 200 }, (_, i) => 400 + i),
    ]);
  });
});

describe('WorkerSinkTask without records', () => {
  it('calls put([]) on a sink that receives nothing, and put with the records once they come', async () => {
    calls.length = 0;
    await startSink('quiet', 'RUNNING');
    await waitFor('two empty puts', () => (count('put []') >= 2 ? true : undefined));
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'quiet', messages: [{ value: 'a' }, { value: 'b' }] });
    await producer.disconnect();
    await waitFor('the records put', () => (calls.includes('put 0,1') ? true : undefined));
    expect(calls.filter((c) => c.startsWith('put ') && c !== 'put []')).toEqual(['put 0,1']);
  });

  it('makes no empty put while the connector is paused, and makes them again once resumed', async () => {
    calls.length = 0;
    const worker = await startSink('paused', 'PAUSED');
    // Offset commits go on while paused (every 100 ms): six of them span more than
    // two idle intervals.
    await waitFor('six commits while paused', () => (count('preCommit') >= 6 ? true : undefined));
    expect(count('put []')).toBe(0);
    await worker.setConnectorTargetState('paused', 'RUNNING');
    await waitFor('an empty put after resuming', () => (count('put []') >= 1 ? true : undefined));
  });
});
