/**
 * Altering and resetting a sink connector's offsets against an in-process broker: the
 * consumer group `connect-<name>` keeps the members it had after every operation, on
 * success and on failure, and a refused request writes nothing.
 */

import { type Admin, type Consumer, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ConnectorConfig } from '../../../../src/connect/api/connector.ts';
import { definePlugins } from '../../../../src/connect/api/plugin-manifest.ts';
import {
  alterConnectorOffsets,
  type OffsetContext,
  resetConnectorOffsets,
} from '../../../../src/connect/herder/connector-offsets.ts';
import { offsetsMessages } from '../../../../src/connect/herder/herder.ts';
import { ConfigProviders } from '../../../../src/connect/runtime/config-providers.ts';
import { PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import { ClusterClient } from '../../../../src/protocol/client/cluster-client.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';

/** Every call of the test sink's alterOffsets, in order. */
const alterCalls: Array<{ config: ConnectorConfig; offsets: unknown[] }> = [];

/** A sink whose alterOffsets answers per config: `alter.offsets` = throw | true | false. */
const offsetsSink = definePlugins({
  type: 'sink',
  className: 'test.OffsetsSinkConnector',
  version: '1',
  configDefs: [],
  createConnector: () => ({
    version: () => '1',
    start() {},
    taskConfigs: () => [],
    stop() {},
    alterOffsets(config, offsets) {
      alterCalls.push({ config, offsets: [...offsets] });
      if (config['alter.offsets'] === 'throw') throw new Error('the destination is read-only');
      return config['alter.offsets'] === 'true';
    },
  }),
  createTask: () => ({ version: () => '1', start() {}, put() {}, stop() {} }),
});

let broker: TestBroker;
let kafka: Kafka;
let admin: Admin;
let ctx: OffsetContext;
const TOPIC = 'sink-offsets';

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: 2 }] });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: TOPIC,
    messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })),
  });
  await producer.disconnect();
  const plugins = new PluginRegistry();
  plugins.add(offsetsSink, 'test');
  const cluster = new ClusterClient(broker.bootstrap, { clientId: 'offsets-test' });
  ctx = {
    plugins,
    offsetStore: new MemoryOffsetBackingStore(),
    admin: () => admin,
    cluster: () => cluster,
    providers: ConfigProviders.none,
  };
  afterAll(() => cluster.close());
});

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

const config = (extra: Record<string, string> = {}) => ({
  'connector.class': 'test.OffsetsSinkConnector',
  topics: TOPIC,
  ...extra,
});
const at = (partition: number, offset: number | null) => ({
  partition: { kafka_topic: TOPIC, kafka_partition: partition },
  offset: offset === null ? null : { kafka_offset: offset },
});

/** The group as kafka-consumer-groups shows it: state, members and committed offsets. */
async function group(name: string) {
  const { groups } = await admin.describeGroups([`connect-${name}`]);
  const [offsets] = await admin.fetchOffsets({ groupId: `connect-${name}`, topics: [TOPIC] });
  return {
    members: groups[0]!.members.map((m) => m.memberId),
    offsets: Object.fromEntries(
      (offsets?.partitions ?? [])
        .filter((p) => Number(p.offset) >= 0)
        .map((p) => [p.partition, Number(p.offset)]),
    ),
  };
}

/** A consumer in the connector's group that stays there: a sink task not stopped yet. */
async function zombieTask(name: string): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: `connect-${name}`,
    sessionTimeout: 30_000,
    // disconnect() waits for the fetch in flight: keep it short.
    maxWaitTimeInMs: 100,
  });
  onTestFinished(() => consumer.disconnect());
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const joined = new Promise<void>((resolve) =>
    consumer.on(consumer.events.GROUP_JOIN, () => resolve()),
  );
  await consumer.run({ autoCommit: false, eachMessage: async () => {} });
  await joined;
  return consumer;
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: Error) => e,
  );
}

describe('sink connector offsets', () => {
  it('alters committed offsets without joining the group; a null offset deletes that one', async () => {
    const answer = await alterConnectorOffsets(ctx, 'alter', config(), [at(0, 3), at(1, 4)]);
    expect(answer).toEqual({ message: offsetsMessages.alteredFrameworkOnly });
    expect(await group('alter')).toEqual({ members: [], offsets: { 0: 3, 1: 4 } });

    await alterConnectorOffsets(ctx, 'alter', config(), [at(1, null)]);
    expect(await group('alter')).toEqual({ members: [], offsets: { 0: 3 } });
  });

  it('a bad entry refuses the request before the connector or the group is touched', async () => {
    await alterConnectorOffsets(ctx, 'bad', config(), [at(0, 5)]);
    alterCalls.length = 0;
    const error = await failure(alterConnectorOffsets(ctx, 'bad', config(), [at(1, 2), at(0, -5)]));
    expect(error).toMatchObject({
      kind: 'bad-request',
      message:
        "Invalid Kafka offset value in the provided offsets: '-5'. Offset values for sink connectors need to be non-negative integers.",
    });
    expect(alterCalls).toEqual([]);
    expect(await group('bad')).toEqual({ members: [], offsets: { 0: 5 } });
    // At once, not after a session timeout.
    await alterConnectorOffsets(ctx, 'bad', config(), [at(0, 1)]);
    expect(await group('bad')).toEqual({ members: [], offsets: { 0: 1 } });
  });

  it('a connector whose alterOffsets throws refuses the request and the group is as it was', async () => {
    await alterConnectorOffsets(ctx, 'throws', config(), [at(0, 6)]);
    const error = await failure(
      alterConnectorOffsets(ctx, 'throws', config({ 'alter.offsets': 'throw' }), [at(0, 2)]),
    );
    expect(error.message).toBe(
      'Failed to modify offsets for sink connector throws: the destination is read-only',
    );
    expect(await group('throws')).toEqual({ members: [], offsets: { 0: 6 } });
    const reset = await failure(
      resetConnectorOffsets(ctx, 'throws', config({ 'alter.offsets': 'throw' })),
    );
    expect(reset.message).toMatch(/^Failed to modify offsets for sink connector throws/);
    expect(await group('throws')).toEqual({ members: [], offsets: { 0: 6 } });
  });

  it('an unknown topic fails in the write, named in the message, with no member left behind', async () => {
    const error = await failure(
      alterConnectorOffsets(ctx, 'unknown', config(), [
        {
          partition: { kafka_topic: 'no-such-topic', kafka_partition: 0 },
          offset: { kafka_offset: 1 },
        },
      ]),
    );
    expect(error.message).toBe(
      'Failed to alter consumer group offsets for connector unknown: no-such-topic-0: UNKNOWN_TOPIC_OR_PARTITION (This server does not host this topic-partition.)',
    );
    expect((await group('unknown')).members).toEqual([]);
    await alterConnectorOffsets(ctx, 'unknown', config(), [at(0, 2)]);
    expect(await group('unknown')).toEqual({ members: [], offsets: { 0: 2 } });
  });

  it('while a task is still in the group, alter and reset answer the zombie message and leave it its member', async () => {
    await alterConnectorOffsets(ctx, 'zombie', config(), [at(0, 1)]);
    await zombieTask('zombie');
    const before = await group('zombie');
    expect(before.members).toHaveLength(1);

    const altered = await failure(alterConnectorOffsets(ctx, 'zombie', config(), [at(0, 4)]));
    expect(altered.message).toBe(
      "Failed to alter consumer group offsets for connector zombie either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.",
    );
    const nulled = await failure(alterConnectorOffsets(ctx, 'zombie', config(), [at(0, null)]));
    expect(nulled.message).toMatch(
      /^Failed to alter consumer group offsets for connector zombie either/,
    );
    const reset = await failure(resetConnectorOffsets(ctx, 'zombie', config()));
    expect(reset.message).toMatch(
      /^Failed to reset consumer group offsets for connector zombie either/,
    );
    expect(await group('zombie')).toEqual(before);
  });

  it('reset deletes the group and is idempotent; the connector hears every partition reset', async () => {
    await alterConnectorOffsets(ctx, 'reset', config(), [at(0, 2), at(1, 3)]);
    alterCalls.length = 0;
    expect(await resetConnectorOffsets(ctx, 'reset', config({ 'alter.offsets': 'true' }))).toEqual({
      message: offsetsMessages.reset,
    });
    expect(alterCalls[0]?.offsets).toEqual([
      { topic: TOPIC, partition: 0, offset: null },
      { topic: TOPIC, partition: 1, offset: null },
    ]);
    expect(await group('reset')).toEqual({ members: [], offsets: {} });
    const { groups } = await admin.listGroups();
    expect(groups.map((g) => g.groupId)).not.toContain('connect-reset');
    expect(await resetConnectorOffsets(ctx, 'reset', config())).toEqual({
      message: offsetsMessages.resetFrameworkOnly,
    });
  });
});
