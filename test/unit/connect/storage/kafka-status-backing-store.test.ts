/**
 * A RUNNING status with a trace (a task's reportTrouble) in the status topic: written
 * in Kafka Connect's layout, read back by another worker, cleared by a RUNNING without
 * one; against the embedded broker.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { StatusReporter } from '../../../../src/connect/herder/status-reporter.ts';
import { TaskTrouble } from '../../../../src/connect/runtime/task-trouble.ts';
import { KafkaBasedLog } from '../../../../src/connect/storage/kafka-based-log.ts';
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
const logger = getLogger('test.status');
const id = { connector: 'cdc', task: 0 };

beforeAll(async () => {
  broker = await startTestBroker();
  client = new ClusterClient(broker.bootstrap, { clientId: 'status-test' });
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

/** The values written under `key`, in order, as text. */
async function rawValues(topic: string, key: string): Promise<Array<string | null>> {
  const values: Array<string | null> = [];
  const log = new KafkaBasedLog({
    client,
    topic,
    partitions: 5,
    logger,
    maxWaitMs: 20,
    onRecord: (r) => {
      if (String(r.key) === key) values.push(r.value === null ? null : r.value.toString('utf8'));
    },
  });
  await log.start();
  await log.stop();
  return values;
}

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
    expect(await rawValues('status-trace', taskStatusKey(id))).toEqual([
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
    expect(await rawValues('status-reported', taskStatusKey(id))).toHaveLength(3);
  });
});
