/**
 * A source connector's own offsets topic (`offsets.storage.topic`), on one `connect
 * worker` child process with the broker in the test process (it outlives restarts):
 *   - at-least-once: offsets are committed to the connector's topic and copied to the
 *     worker's; a restart mid-stream repeats nothing (the stop commits what was sent);
 *   - exactly-once: the same, the offsets written in the task's transactions; reads
 *     fall back to the worker's topic where the connector's has nothing;
 *   - GET/PATCH/DELETE /offsets read the connector's topic first and write both.
 */
import { Partitioners } from 'kafkajs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { offsetKey } from '../../../src/connect/runtime/offset-keys.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readCommitted } from '../broker/helpers/transaction-reader.ts';
import {
  baseOverrides,
  rest,
  startWorker,
  type WorkerProcess,
  waitFor,
} from './distributed-helpers.ts';

const OFFSET_PARTITIONS = 3;
const PARTITION = { task: 0, tasks: 1 };

let broker: TestBroker;
let worker: WorkerProcess | undefined;

async function restartWorker(mode: 'enabled' | 'disabled'): Promise<WorkerProcess> {
  await worker?.process.stop();
  worker = await startWorker([
    '-o',
    `bootstrap.servers=${broker.bootstrap}`,
    ...baseOverrides({
      'scheduled.rebalance.max.delay.ms': '0',
      'offset.storage.partitions': String(OFFSET_PARTITIONS),
      'exactly.once.source.support': mode,
    }),
  ]);
  return worker;
}

async function setUp(): Promise<void> {
  broker = await startTestBroker({
    config: { 'group.min.session.timeout.ms': 500, 'transaction.state.log.num.partitions': 3 },
  });
  onTestFinished(async () => {
    await worker?.process.stop();
    worker = undefined;
    await broker.stop();
  });
}

function datagen(name: string, extra: Record<string, string>): Record<string, string> {
  return {
    'connector.class': 'DatagenConnector',
    topic: `${name}-gen`,
    'tasks.max': '1',
    'records.per.second': '400',
    'batch.size': '20',
    'offsets.storage.topic': `${name}-offsets`,
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': 'false',
    ...extra,
  };
}

/** How often each sequence number is in the topic, for a read_committed reader. */
async function sequenceCounts(topic: string): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const r of await readCommitted(broker.bootstrap, topic, 1)) {
    const seq = JSON.parse(r.value!.toString('utf8')).seq as number;
    counts.set(seq, (counts.get(seq) ?? 0) + 1);
  }
  return counts;
}

/** The latest value of `key` in an offsets topic (null: a tombstone; undefined: none). */
async function latestOffset(topic: string, key: string): Promise<unknown> {
  let latest: unknown;
  for (const r of await readCommitted(broker.bootstrap, topic, OFFSET_PARTITIONS)) {
    if (r.key?.toString('utf8') !== key) continue;
    latest = r.value === null ? null : JSON.parse(r.value.toString('utf8'));
  }
  return latest;
}

/** Writes an offset to the worker's offsets topic from outside, partitioned as the worker does. */
async function writeWorkerOffset(key: string, value: unknown): Promise<void> {
  const producer = kafka(broker.bootstrap).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    await producer.send({
      topic: 'connect-offsets',
      acks: -1,
      messages: [{ key, value: JSON.stringify(value) }],
    });
  } finally {
    await producer.disconnect();
  }
}

/** Waits until `count` numbers from `from` are in the topic; returns the counts. */
function allProduced(topic: string, from: number, to: number): Promise<Map<number, number>> {
  return waitFor(
    `numbers ${from}..${to - 1} in ${topic}`,
    async () => {
      const c = await sequenceCounts(topic);
      for (let n = from; n < to; n++) if (!c.has(n)) return undefined;
      return c;
    },
    30_000,
  );
}

async function waitForRecords(topic: string, atLeast: number): Promise<void> {
  await waitFor(
    `${atLeast} records in ${topic}`,
    async () => ((await sequenceCounts(topic)).size >= atLeast ? true : undefined),
    30_000,
  );
}

describe("a source connector's own offsets topic", () => {
  // Four worker starts one after another: the timeout leaves room for a loaded machine.
  it('keeps offsets in its topic at-least-once and exactly-once, across restarts, and REST reads and writes them there', async () => {
    await setUp();
    const aloKey = offsetKey('alo', PARTITION);
    const key = offsetKey('eos', PARTITION);
    // At-least-once, restarted mid-stream (the restart turns exactly-once on: the stop
    // commits at-least-once, the next task reads its offsets back from alo-offsets).
    let w = await restartWorker('disabled');
    // Nothing in eos's own topic yet: its task is to fall back to the worker's topic.
    await writeWorkerOffset(key, { seq: 99 });
    expect(
      (await rest(w, 'PUT', '/connectors/alo/config', datagen('alo', { iterations: '300' })))
        .status,
    ).toBe(201);
    await waitForRecords('alo-gen', 60);
    w = await restartWorker('enabled');
    // Slower, so that the restart below falls mid-stream.
    const config = datagen('eos', {
      iterations: '400',
      'records.per.second': '100',
      'exactly.once.support': 'required',
    });
    const created = await rest(w, 'PUT', '/connectors/eos/config', config);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await waitForRecords('eos-gen', 30);
    w = await restartWorker('enabled');

    // The graceful stop committed every acknowledged record's offset, and the restarted
    // task resumed from alo-offsets: nothing lost, nothing repeated.
    const aloCounts = await allProduced('alo-gen', 0, 300);
    expect([...aloCounts].filter(([, n]) => n !== 1)).toEqual([]);
    await waitFor(
      'the last alo offset in both topics',
      async () =>
        JSON.stringify(await latestOffset('alo-offsets', aloKey)) === '{"seq":299}' &&
        JSON.stringify(await latestOffset('connect-offsets', aloKey)) === '{"seq":299}'
          ? true
          : undefined,
      30_000,
    );

    // Exactly-once, restarted mid-stream.
    const counts = await allProduced('eos-gen', 100, 400);
    expect([...counts.keys()].sort((a, b) => a - b)[0]).toBe(100);
    expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    // Committed to the connector's topic in the transactions, and copied to the worker's.
    await waitFor(
      'the last eos offset in both topics',
      async () =>
        JSON.stringify(await latestOffset('eos-offsets', key)) === '{"seq":399}' &&
        JSON.stringify(await latestOffset('connect-offsets', key)) === '{"seq":399}'
          ? true
          : undefined,
      30_000,
    );
    // Created like the worker's offsets topic: its partition count, compacted.
    const admin = kafka(broker.bootstrap).admin();
    await admin.connect();
    try {
      const [meta] = (await admin.fetchTopicMetadata({ topics: ['eos-offsets'] })).topics;
      expect(meta?.partitions.length).toBe(OFFSET_PARTITIONS);
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: 'eos-offsets', configNames: ['cleanup.policy'] }],
      });
      expect(described.resources[0]?.configEntries[0]?.configValue).toBe('compact');
    } finally {
      await admin.disconnect();
    }

    expect((await rest(w, 'PUT', '/connectors/eos/stop')).status).toBe(204);
    await waitFor(
      'eos stopped',
      async () => {
        const s = await rest(w, 'GET', '/connectors/eos/status');
        return s.body.connector?.state === 'STOPPED' && s.body.tasks.length === 0
          ? true
          : undefined;
      },
      30_000,
    );
    // The connector's topic wins over a value in the worker's.
    await writeWorkerOffset(key, { seq: 5 });
    expect((await rest(w, 'GET', '/connectors/eos/offsets')).body).toEqual({
      offsets: [{ partition: PARTITION, offset: { seq: 399 } }],
    });

    const patched = await rest(w, 'PATCH', '/connectors/eos/offsets', {
      offsets: [{ partition: PARTITION, offset: { seq: 42 } }],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await rest(w, 'GET', '/connectors/eos/offsets')).body).toEqual({
      offsets: [{ partition: PARTITION, offset: { seq: 42 } }],
    });
    expect(await latestOffset('eos-offsets', key)).toEqual({ seq: 42 });

    const reset = await rest(w, 'DELETE', '/connectors/eos/offsets');
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect((await rest(w, 'GET', '/connectors/eos/offsets')).body).toEqual({ offsets: [] });
    // Tombstones in both topics: no old value to fall back to.
    expect(await latestOffset('eos-offsets', key)).toBeNull();
    expect(await latestOffset('connect-offsets', key)).toBeNull();

    expect((await rest(w, 'GET', '/connectors/alo/offsets')).body).toEqual({
      offsets: [{ partition: PARTITION, offset: { seq: 299 } }],
    });
  }, 120_000);
});
