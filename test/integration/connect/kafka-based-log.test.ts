import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBroker, startBroker } from '../../../src/broker/broker.ts';
import { ensureInternalTopic } from '../../../src/connect/storage/internal-topic.ts';
import { KafkaBasedLog, type LogRecord } from '../../../src/connect/storage/kafka-based-log.ts';
import { ClusterClient, parseBootstrap } from '../../../src/protocol/client/cluster-client.ts';
import { getLogger } from '../../../src/util/logger.ts';

let dir: string;
let broker: RunningBroker;
let client: ClusterClient;
let producer: Producer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kblog-'));
  broker = await startBroker({ host: '127.0.0.1', port: 0, dataDir: dir, nodeId: 1, config: {} });
  client = new ClusterClient(`127.0.0.1:${broker.port}`, { clientId: 'test' });
  producer = new Kafka({
    brokers: [`127.0.0.1:${broker.port}`],
    logLevel: logLevel.NOTHING,
  }).producer({ idempotent: true });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  client?.close();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('internal topics', () => {
  it('are created compacted with the requested partitions', async () => {
    const partitions = await ensureInternalTopic(client, {
      topic: 'offsets-a',
      configKey: 'offset.storage.topic',
      partitions: 25,
      replicationFactor: -1,
    });
    expect(partitions).toBe(25);
  });

  it('refuse a config topic with more than one partition, naming the key', async () => {
    await ensureInternalTopic(client, {
      topic: 'two',
      configKey: 'offset.storage.topic',
      partitions: 2,
      replicationFactor: -1,
    });
    await expect(
      ensureInternalTopic(client, {
        topic: 'two',
        configKey: 'config.storage.topic',
        partitions: 1,
        replicationFactor: -1,
        exactlyOnePartition: true,
      }),
    ).rejects.toThrow(/'config.storage.topic' property is required to have a single partition/);
  });

  it('refuse an existing topic that is not compacted', async () => {
    const admin = new Kafka({
      brokers: [`127.0.0.1:${broker.port}`],
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'deleting', numPartitions: 1 }] });
    await admin.disconnect();
    await expect(
      ensureInternalTopic(client, {
        topic: 'deleting',
        configKey: 'status.storage.topic',
        partitions: 1,
        replicationFactor: -1,
      }),
    ).rejects.toThrow(/cleanup.policy=compact/);
  });
});

describe('KafkaBasedLog', () => {
  it('reads everything written before start, then sees later writes after readToEnd', async () => {
    const partitions = await ensureInternalTopic(client, {
      topic: 'status-b',
      configKey: 'status.storage.topic',
      partitions: 5,
      replicationFactor: -1,
    });
    for (let i = 0; i < 50; i++) {
      await producer.send({ topic: 'status-b', messages: [{ key: `k${i % 7}`, value: `v${i}` }] });
    }
    const seen: LogRecord[] = [];
    const log = new KafkaBasedLog({
      client,
      topic: 'status-b',
      partitions,
      logger: getLogger('test'),
      onRecord: (r) => seen.push(r),
    });
    await log.start();
    expect(seen).toHaveLength(50);
    const latest = new Map(seen.map((r) => [String(r.key), String(r.value)]));
    expect(latest.get('k6')).toBe('v48');

    await producer.send({
      topic: 'status-b',
      messages: [
        { key: 'k6', value: 'newest' },
        { key: 'k1', value: null },
      ],
    });
    await log.readToEnd();
    const after = seen.slice(50);
    expect(
      after.map((r) => [String(r.key), r.value === null ? null : String(r.value)]).sort(),
    ).toEqual([
      ['k1', null],
      ['k6', 'newest'],
    ]);
    // Offsets are delivered in order within each partition.
    for (let p = 0; p < partitions; p++) {
      const offsets = seen.filter((r) => r.partition === p).map((r) => r.offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    }
    await log.stop();
  });

  it('with a tail pause, readToEnd and stop cut the pause short', async () => {
    const partitions = await ensureInternalTopic(client, {
      topic: 'offsets-paused',
      configKey: 'offset.storage.topic',
      partitions: 3,
      replicationFactor: -1,
    });
    const seen: LogRecord[] = [];
    const log = new KafkaBasedLog({
      client,
      topic: 'offsets-paused',
      partitions,
      logger: getLogger('test'),
      onRecord: (r) => seen.push(r),
      // Far beyond the test's timeout: only a readToEnd() or stop() can end a pause.
      tailPauseMs: 3_600_000,
    });
    await log.start();
    for (let round = 0; round < 3; round++) {
      await producer.send({
        topic: 'offsets-paused',
        messages: [{ key: `k${round}`, value: `v${round}` }],
      });
      await log.readToEnd();
      expect(seen.map((r) => String(r.value))).toEqual(
        Array.from({ length: round + 1 }, (_, i) => `v${i}`),
      );
    }
    await log.stop();
  });
});

describe('parseBootstrap', () => {
  it('accepts listener prefixes and rejects entries without a port', () => {
    expect(parseBootstrap('PLAINTEXT://a:9092, b:9093')).toEqual([
      { host: 'a', port: 9092 },
      { host: 'b', port: 9093 },
    ]);
    expect(() => parseBootstrap('broker')).toThrow(/host:port/);
  });
});

describe('KafkaOffsetBackingStore', () => {
  it('keeps offsets across store instances, with null deleting a key', async () => {
    const { KafkaOffsetBackingStore } = await import(
      '../../../src/connect/storage/kafka-offset-backing-store.ts'
    );
    const options = {
      client,
      producer,
      topic: 'connect-offsets-c',
      partitions: 25,
      replicationFactor: -1,
      logger: getLogger('test'),
    };
    const first = new KafkaOffsetBackingStore(options);
    await first.start();
    const key = JSON.stringify(['file-source', { filename: '/tmp/in.txt' }]);
    await first.set(
      new Map([
        [key, JSON.stringify({ position: 42 })],
        ['gone', '1'],
      ]),
    );
    await first.set(new Map([['gone', null]]));
    expect((await first.get([key])).get(key)).toBe('{"position":42}');
    await first.stop();

    const second = new KafkaOffsetBackingStore(options);
    await second.start();
    const all = await second.entries();
    expect(all.get(key)).toBe('{"position":42}');
    expect(all.has('gone')).toBe(false);
    await second.stop();
  });
});
