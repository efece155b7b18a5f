/**
 * The config and status stores against the embedded broker: what one worker writes,
 * another reads, in Kafka Connect's record layout; task configs count only once
 * committed; stale status writes are fenced by generation.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ConnectorTaskId } from '../../../../src/connect/herder/herder.ts';
import { StatusReporter } from '../../../../src/connect/herder/status-reporter.ts';
import { TaskTrouble } from '../../../../src/connect/runtime/task-trouble.ts';
import {
  type ConfigUpdateListener,
  configuredWork,
} from '../../../../src/connect/storage/config-backing-store.ts';
import { KafkaBasedLog } from '../../../../src/connect/storage/kafka-based-log.ts';
import { KafkaConfigBackingStore } from '../../../../src/connect/storage/kafka-config-backing-store.ts';
import {
  KafkaStatusBackingStore,
  taskStatusKey,
} from '../../../../src/connect/storage/kafka-status-backing-store.ts';
import { ClusterClient } from '../../../../src/protocol/client/cluster-client.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';

let broker: TestBroker;
let producer: Producer;
let client: ClusterClient;
const logger = getLogger('test.stores');

beforeAll(async () => {
  broker = await startTestBroker();
  client = new ClusterClient(broker.bootstrap, { clientId: 'stores-test' });
  producer = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).producer({
    idempotent: true,
  });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  client?.close();
  await broker?.stop();
});

async function configStore(topic: string): Promise<KafkaConfigBackingStore> {
  const store = new KafkaConfigBackingStore({
    client,
    producer,
    topic,
    replicationFactor: -1,
    logger,
    readMaxWaitMs: 20,
  });
  await store.start();
  onTestFinished(() => store.stop());
  return store;
}

async function statusStore(topic: string): Promise<KafkaStatusBackingStore> {
  const store = new KafkaStatusBackingStore({
    client,
    producer,
    topic,
    partitions: 5,
    replicationFactor: -1,
    logger,
    readMaxWaitMs: 20,
  });
  await store.start();
  onTestFinished(() => store.stop());
  return store;
}

/** Every record of a topic as key -> raw value text, in offset order per partition. */
async function rawRecords(
  topic: string,
  partitions: number,
): Promise<Array<[string, string | null]>> {
  const records: Array<[string, string | null]> = [];
  const log = new KafkaBasedLog({
    client,
    topic,
    partitions,
    logger,
    maxWaitMs: 20,
    onRecord: (r) =>
      records.push([String(r.key), r.value === null ? null : r.value.toString('utf8')]),
  });
  await log.start();
  await log.stop();
  return records;
}

/** The values written under `key` to a 5-partition status topic, in order, as text. */
async function rawValuesOf(topic: string, key: string): Promise<Array<string | null>> {
  return (await rawRecords(topic, 5)).filter(([k]) => k === key).map(([, v]) => v);
}

const id = { connector: 'cdc', task: 0 };

function recordingListener(): ConfigUpdateListener & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    onConnectorConfigUpdate: (c) => events.push(`config ${c}`),
    onConnectorConfigRemove: (c) => events.push(`removed ${c}`),
    onTaskConfigUpdate: (ids: ConnectorTaskId[]) =>
      events.push(`tasks ${ids.map((i) => `${i.connector}-${i.task}`).join(',')}`),
    onConnectorTargetStateChange: (c) => events.push(`target ${c}`),
  };
}

describe('KafkaConfigBackingStore', () => {
  it('writes Kafka Connect records that another instance reads back, with listeners told of each change', async () => {
    const writer = await configStore('cfg-a');
    const reader = await configStore('cfg-a');
    const listener = recordingListener();
    reader.addListener(listener);

    await writer.putConnectorConfig(
      'my-source',
      { 'connector.class': 'FileStreamSource', 'tasks.max': '2' },
      'PAUSED',
    );
    await writer.putTaskConfigs('my-source', [{ file: 'a' }, { file: 'b' }]);
    await writer.putTargetState('my-source', 'STOPPED');
    await reader.readToEnd();

    const snap = reader.snapshot();
    expect(snap.connectorConfigs.get('my-source')).toEqual({
      'connector.class': 'FileStreamSource',
      'tasks.max': '2',
    });
    expect(snap.taskConfigs.get('my-source')).toEqual([{ file: 'a' }, { file: 'b' }]);
    expect(snap.targetStates.get('my-source')).toBe('STOPPED');
    expect(snap.offset).toBe(6);
    expect(configuredWork(snap)).toEqual(new Map([['my-source', 2]]));
    expect(listener.events).toEqual([
      'config my-source',
      'tasks my-source-0,my-source-1',
      'target my-source',
    ]);

    expect(await rawRecords('cfg-a', 1)).toEqual([
      ['target-state-my-source', '{"state":"PAUSED","state.v2":"PAUSED"}'],
      [
        'connector-my-source',
        '{"properties":{"connector.class":"FileStreamSource","tasks.max":"2"}}',
      ],
      ['task-my-source-0', '{"properties":{"file":"a"}}'],
      ['task-my-source-1', '{"properties":{"file":"b"}}'],
      ['commit-my-source', '{"tasks":2}'],
      ['target-state-my-source', '{"state":"PAUSED","state.v2":"STOPPED"}'],
    ]);

    await writer.removeConnectorConfig('my-source');
    await reader.readToEnd();
    expect(reader.snapshot().connectorConfigs.has('my-source')).toBe(false);
    expect(reader.snapshot().taskConfigs.has('my-source')).toBe(false);
    expect(listener.events.at(-1)).toBe('removed my-source');
  });

  it('uses task configs only once their commit record is read', async () => {
    const store = await configStore('cfg-b');
    await store.putConnectorConfig('c', { 'connector.class': 'X' });
    await store.putTaskConfigs('c', [{ n: '0' }]);
    // A writer that died after two of three task records, before its commit.
    await producer.send({
      topic: 'cfg-b',
      acks: -1,
      messages: [
        { key: 'task-c-0', value: '{"properties":{"n":"new-0"}}' },
        { key: 'task-c-1', value: '{"properties":{"n":"new-1"}}' },
      ],
    });
    await store.readToEnd();
    expect(store.snapshot().taskConfigs.get('c')).toEqual([{ n: '0' }]);

    // A commit naming more tasks than were written marks the connector inconsistent.
    await producer.send({
      topic: 'cfg-b',
      acks: -1,
      messages: [{ key: 'commit-c', value: '{"tasks":3}' }],
    });
    await store.readToEnd();
    expect(store.snapshot().inconsistent.has('c')).toBe(true);
    expect(configuredWork(store.snapshot()).get('c')).toBe(0);

    await store.putTaskConfigs('c', [{ n: 'a' }, { n: 'b' }]);
    expect(store.snapshot().inconsistent.has('c')).toBe(false);
    expect(store.snapshot().taskConfigs.get('c')).toEqual([{ n: 'a' }, { n: 'b' }]);
  });

  it('reads what a Java worker wrote: pre-3.5 target states and a connector without one', async () => {
    const admin = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic: 'cfg-c',
          numPartitions: 1,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    });
    await admin.disconnect();
    await producer.send({
      topic: 'cfg-c',
      acks: -1,
      messages: [
        { key: 'connector-old', value: '{"properties":{"connector.class":"Y","tasks.max":"1"}}' },
        { key: 'target-state-old', value: '{"state":"PAUSED"}' },
        { key: 'connector-plain', value: '{"properties":{"connector.class":"Z"}}' },
        {
          key: 'session-key',
          value: '{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":1}',
        },
      ],
    });
    const store = await configStore('cfg-c');
    const snap = store.snapshot();
    expect(snap.targetStates.get('old')).toBe('PAUSED');
    expect(snap.targetStates.get('plain')).toBe('RUNNING');
    expect([...snap.connectorConfigs.keys()].sort()).toEqual(['old', 'plain']);
  });

  it('passes restart requests written after start to listeners, and not older ones', async () => {
    const running = await configStore('cfg-d');
    const seen: string[] = [];
    running.addListener({
      ...recordingListener(),
      onRestartRequest: (r) =>
        seen.push(`${r.connector} tasks=${r.includeTasks} failed=${r.onlyFailed}`),
    });
    await running.putRestartRequest({ connector: 'c', includeTasks: true, onlyFailed: false });
    expect(seen).toEqual(['c tasks=true failed=false']);
    expect((await rawRecords('cfg-d', 1)).at(-1)).toEqual([
      'restart-connector-c',
      '{"include-tasks":true,"only-failed":false}',
    ]);

    const late = await configStore('cfg-d');
    const lateSeen: string[] = [];
    late.addListener({
      ...recordingListener(),
      onRestartRequest: (r) => lateSeen.push(r.connector),
    });
    await late.readToEnd();
    expect(lateSeen).toEqual([]);
  });

  it('refuses a config topic with more than one partition', async () => {
    const admin = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic: 'cfg-wide',
          numPartitions: 3,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    });
    await admin.disconnect();
    const store = new KafkaConfigBackingStore({
      client,
      producer,
      topic: 'cfg-wide',
      replicationFactor: -1,
      logger,
    });
    await expect(store.start()).rejects.toThrow(/required to have a single partition/);
  });
});

describe('KafkaStatusBackingStore', () => {
  it('writes Connect status records that another worker reads, per connector and task', async () => {
    const w1 = await statusStore('status-a');
    const w2 = await statusStore('status-a');
    await w1.put({
      connector: 'my-conn',
      state: 'RUNNING',
      trace: null,
      workerId: 'w1:8083',
      generation: 3,
    });
    await w1.putTask({
      id: { connector: 'my-conn', task: 0 },
      state: 'FAILED',
      trace: 'boom',
      workerId: 'w1:8083',
      generation: 3,
    });
    await w1.putTopic({
      topic: 'orders',
      connector: 'my-conn',
      task: 0,
      discoverTimestamp: 1700000000000,
    });
    await w2.readToEnd();
    expect(w2.get('my-conn')).toEqual({
      connector: 'my-conn',
      state: 'RUNNING',
      trace: null,
      workerId: 'w1:8083',
      generation: 3,
    });
    expect(w2.getAll('my-conn')).toEqual([
      {
        id: { connector: 'my-conn', task: 0 },
        state: 'FAILED',
        trace: 'boom',
        workerId: 'w1:8083',
        generation: 3,
      },
    ]);
    expect(w2.getTopics('my-conn').map((t) => t.topic)).toEqual(['orders']);
    const raw = new Map(await rawRecords('status-a', 5));
    expect(raw.get('status-connector-my-conn')).toBe(
      '{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}',
    );
    expect(raw.get('status-topic-orders:connector-my-conn')).toBe(
      '{"topic":{"name":"orders","connector":"my-conn","task":0,"discoverTimestamp":1700000000000}}',
    );

    await w1.deleteConnector('my-conn');
    await w2.readToEnd();
    expect(w2.get('my-conn')).toBeUndefined();
    expect(w2.getAll('my-conn')).toEqual([]);
    expect(w2.getTopics('my-conn')).toEqual([]);
  });

  it('does not let a worker of an older generation overwrite the status of the task’s new owner', async () => {
    const oldOwner = await statusStore('status-b');
    const newOwner = await statusStore('status-b');
    const id = { connector: 'c', task: 1 };
    await oldOwner.putTask({
      id,
      state: 'RUNNING',
      trace: null,
      workerId: 'w1:8083',
      generation: 5,
    });
    await newOwner.putTask({
      id,
      state: 'RUNNING',
      trace: null,
      workerId: 'w2:8083',
      generation: 6,
    });

    // w1 stops late and reports it: refused, w2's RUNNING stands.
    expect(
      await oldOwner.putTaskSafe({
        id,
        state: 'UNASSIGNED',
        trace: null,
        workerId: 'w1:8083',
        generation: 5,
      }),
    ).toBe(false);
    // The owner itself may always report, whatever the generation.
    expect(
      await newOwner.putTaskSafe({
        id,
        state: 'UNASSIGNED',
        trace: null,
        workerId: 'w2:8083',
        generation: 6,
      }),
    ).toBe(true);

    const reader = await statusStore('status-b');
    expect(reader.getTask(id)).toMatchObject({
      state: 'UNASSIGNED',
      workerId: 'w2:8083',
      generation: 6,
    });
  });
});

describe('KafkaStatusBackingStore with a RUNNING trace', () => {
  it('writes a RUNNING status with its trace in Connect’s layout, and another worker reads it back', async () => {
    const writer = await statusStore('status-trace');
    const reader = await statusStore('status-trace');

    await writer.putTask({
      id,
      state: 'RUNNING',
      trace: 'waiting for X',
      workerId: 'w1:8083',
      generation: 2,
    });
    await reader.readToEnd();
    const troubled = reader.getTask(id);
    await writer.putTask({ id, state: 'RUNNING', trace: null, workerId: 'w1:8083', generation: 2 });
    await reader.readToEnd();

    expect(troubled).toEqual({
      id,
      state: 'RUNNING',
      trace: 'waiting for X',
      workerId: 'w1:8083',
      generation: 2,
    });
    expect(reader.getTask(id)?.trace).toBeNull();
    expect(await rawValuesOf('status-trace', taskStatusKey(id))).toEqual([
      '{"state":"RUNNING","trace":"waiting for X","worker_id":"w1:8083","generation":2}',
      '{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":2}',
    ]);
  });

  it('reads a RUNNING trace written by another Connect worker', async () => {
    const reader = await statusStore('status-java');

    await producer.send({
      topic: 'status-java',
      acks: -1,
      messages: [
        {
          key: taskStatusKey(id),
          value: '{"state":"RUNNING","trace":"slot busy","worker_id":"java:8083","generation":9}',
        },
      ],
    });
    await reader.readToEnd();

    expect(reader.getTask(id)).toMatchObject({ state: 'RUNNING', trace: 'slot busy' });
  });

  it("carries a task's reported trouble through the distributed status path to the topic", async () => {
    const store = await statusStore('status-reported');
    const reporter = new StatusReporter({
      store,
      workerId: () => 'w1:8083',
      generation: () => 4,
      topicTracking: false,
      logger,
    });
    const trouble = new TaskTrouble(id, reporter);
    trouble.listener.taskState(id, 'RUNNING');

    trouble.report('waiting for X');
    await reporter.flush();
    await store.readToEnd();
    const troubled = store.getTask(id);
    trouble.report(null);
    await reporter.flush();
    await store.readToEnd();

    expect(troubled).toMatchObject({ state: 'RUNNING', trace: 'waiting for X', generation: 4 });
    expect(store.getTask(id)).toMatchObject({ state: 'RUNNING', trace: null });
    expect(await rawValuesOf('status-reported', taskStatusKey(id))).toHaveLength(3);
  });
});
