/**
 * The task contracts of source-task.ts and sink-task.ts as the Worker honours them,
 * checked with small test plugins against a real broker: what the runner calls, in
 * which order, with which offsets.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  definePlugins,
  type RecordMetadata,
  RetriableException,
  type SinkRecord,
  type SinkTaskContext,
  type SourceRecord,
  type TopicPartition,
  type TopicPartitionOffset,
} from '../../../src/connect/api/index.ts';
import { connectorOffsets } from '../../../src/connect/runtime/connector-offset-reader.ts';
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

/** What the test plugins saw, in call order. */
const events: string[] = [];
const committedRecords: Array<{ value: unknown; metadata: RecordMetadata | null }> = [];
let offsetsAtCommit: unknown[] = [];
let store = new MemoryOffsetBackingStore();
let sinkContext: SinkTaskContext | undefined;
const put: SinkRecord[][] = [];
let failPutOnce = false;
let seekOnOpen: number | undefined;

const connector = () => ({ version: () => '1', start() {}, taskConfigs: () => [{}], stop() {} });

const plugins = definePlugins(
  {
    type: 'source',
    className: 'test.ScriptedSource',
    version: '1',
    configDefs: [],
    createConnector: connector,
    createTask: () => {
      let polls = 0;
      return {
        version: () => '1',
        start() {},
        async poll(): Promise<SourceRecord[] | null> {
          polls++;
          if (polls === 1) throw new RetriableException('not yet');
          if (polls > 2) {
            await new Promise((r) => setTimeout(r, 20));
            return null;
          }
          return [0, 1, 2, 3].map((i) => ({
            topic: 'scripted',
            kafkaPartition: i % 2,
            value: `v${i}`,
            headers: i === 2 ? [{ key: 'origin', value: 'scripted' }] : [],
            sourcePartition: { stream: 'only' },
            sourceOffset: { seq: i },
          }));
        },
        commitRecord(record: SourceRecord, metadata: RecordMetadata | null) {
          committedRecords.push({ value: record.value, metadata });
        },
        async commit() {
          offsetsAtCommit = await connectorOffsets('scripted', store);
        },
        stop() {},
      };
    },
  },
  {
    type: 'sink',
    className: 'test.RecordingSink',
    version: '1',
    configDefs: [],
    createConnector: connector,
    createTask: () => ({
      version: () => '1',
      start(_config, context: SinkTaskContext) {
        sinkContext = context;
      },
      open(partitions: readonly TopicPartition[]) {
        events.push(`open ${partitions.map((p) => `${p.topic}-${p.partition}`).join(',')}`);
        if (seekOnOpen !== undefined) {
          sinkContext?.offset(partitions.map((p) => ({ ...p, offset: seekOnOpen as number })));
        }
      },
      put(records: readonly SinkRecord[]) {
        if (records.length === 0) return;
        if (failPutOnce) {
          failPutOnce = false;
          events.push(`put failed ${records.map((r) => r.kafkaOffset).join(',')}`);
          sinkContext?.timeout(10);
          throw new RetriableException('destination busy');
        }
        events.push(`put ${records.map((r) => r.kafkaOffset).join(',')}`);
        put.push([...records]);
        sinkContext?.requestCommit();
      },
      preCommit(current: readonly TopicPartitionOffset[]) {
        events.push(`preCommit ${current.map((c) => c.offset).join(',')}`);
        // Durable up to one record less than put: the runner must commit exactly this.
        return current.map((c) => ({ ...c, offset: c.offset - 1 }));
      },
      close(partitions: readonly TopicPartition[]) {
        events.push(`close ${partitions.map((p) => `${p.topic}-${p.partition}`).join(',')}`);
      },
      stop() {
        events.push('stop');
      },
    }),
  },
);

async function useWorker(extra: Record<string, string> = {}) {
  const registry = await loadPlugins({ pluginPath: [], logger: getLogger('test') });
  registry.add(plugins, 'test');
  store = new MemoryOffsetBackingStore();
  const worker = new Worker({
    workerId: 'test:0',
    config: workerConfig(broker.bootstrap, useTmpDir(), {
      'offset.flush.interval.ms': '100',
      ...extra,
    }),
    plugins: registry,
    offsetStore: store,
    status: { connectorState() {}, taskState() {} },
  });
  await worker.start();
  onTestFinished(() => worker.stop());
  return worker;
}

describe('WorkerSourceTask', () => {
  it('retries a retriable poll, calls commitRecord in order with exact metadata, and commit() after the offsets are stored', async () => {
    const worker = await useWorker();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'scripted', numPartitions: 2 }] });
    await admin.disconnect();
    const config = { 'connector.class': 'test.ScriptedSource' };
    await worker.startConnector('scripted', config, 'RUNNING', () => {});
    await worker.startTask({ connector: 'scripted', task: 0 }, config, {}, 'RUNNING');
    await waitFor('offsets committed', () => (offsetsAtCommit.length > 0 ? true : undefined));
    expect(
      committedRecords.map((c) => [c.value, c.metadata?.partition, c.metadata?.offset]),
    ).toEqual([
      ['v0', 0, 0],
      ['v1', 1, 0],
      ['v2', 0, 1],
      ['v3', 1, 1],
    ]);
    expect(offsetsAtCommit).toEqual([{ partition: { stream: 'only' }, offset: { seq: 3 } }]);
    // Headers go through the header converter onto the record.
    const consumer = kafka.consumer({ groupId: 'scripted-reader' });
    await consumer.connect();
    onTestFinished(() => consumer.disconnect());
    await consumer.subscribe({ topic: 'scripted', fromBeginning: true });
    const headers = new Map<string, Record<string, string>>();
    await consumer.run({
      eachMessage: async ({ message }) => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) h[k] = String(v);
        headers.set(String(message.value), h);
      },
    });
    await waitFor('records consumed', () => (headers.size === 4 ? true : undefined));
    expect(headers.get('v2')).toEqual({ origin: 'scripted' });
    expect(headers.get('v0')).toEqual({});
  });
});

describe('WorkerSinkTask', () => {
  it('opens partitions before put, redelivers a batch after RetriableException, seeks from open, commits what preCommit returns, closes before stop', async () => {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'recorded',
      messages: [0, 1, 2, 3, 4].map((i) => ({ value: `r${i}` })),
    });
    await producer.disconnect();
    events.length = 0;
    failPutOnce = true;
    seekOnOpen = 2;
    const worker = await useWorker();
    const config = { 'connector.class': 'test.RecordingSink', topics: 'recorded' };
    await worker.startConnector('recording', config, 'RUNNING', () => {});
    await worker.startTask({ connector: 'recording', task: 0 }, config, {}, 'RUNNING');
    await waitFor('records put', () => (put.flat().length >= 3 ? true : undefined));
    const admin = kafka.admin();
    await admin.connect();
    try {
      const committed = await waitFor('an offset committed', async () => {
        const [t] = await admin.fetchOffsets({
          groupId: 'connect-recording',
          topics: ['recorded'],
        });
        const offset = Number(t?.partitions[0]?.offset ?? -1);
        return offset >= 0 ? offset : undefined;
      });
      // Records 2..4 were put (next offset 5); preCommit declared one less durable.
      expect(committed).toBe(4);
    } finally {
      await admin.disconnect();
    }
    await worker.stopTasks([{ connector: 'recording', task: 0 }]);
    expect(events[0]).toBe('open recorded-0');
    expect(events).toContain('put failed 2,3,4');
    expect(events.indexOf('put 2,3,4')).toBeGreaterThan(events.indexOf('put failed 2,3,4'));
    expect(events.filter((e) => e.startsWith('put ') && !e.includes('failed'))).toEqual([
      'put 2,3,4',
    ]);
    expect(events.slice(-2)).toEqual(['close recorded-0', 'stop']);
    // preCommit gets the position of what was put: the seek (2) while the batch still
    // waited for its redelivery (an offset commit may come that early on a busy
    // machine), 5 once records 2..4 were put; never anything else, never backwards.
    const preCommits = events.filter((e) => e.startsWith('preCommit'));
    expect(preCommits).toContain('preCommit 5');
    expect(
      preCommits.slice(preCommits.indexOf('preCommit 5')).every((e) => e === 'preCommit 5'),
    ).toBe(true);
    expect(preCommits.every((e) => e === 'preCommit 2' || e === 'preCommit 5')).toBe(true);
  });
});
