import { type Admin, ConfigResourceTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { kafka } from './helpers/kafkajs.ts';

let b: TestBroker;
let admin: Admin;

beforeAll(async () => {
  b = await startTestBroker({ config: { 'log.retention.ms': 3600000 } });
  admin = kafka(b.bootstrap).admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect();
  await b?.stop();
});

describe('kafkajs admin against the embedded broker', () => {
  it('creates topics with partitions and configs, and lists them', async () => {
    const created = await admin.createTopics({
      topics: [
        {
          topic: 'orders',
          numPartitions: 4,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
        { topic: 'events' },
      ],
    });
    expect(created).toBe(true);
    const listed = (await admin.listTopics()).filter((t) => !t.startsWith('__')).sort();
    expect(listed).toEqual(['events', 'orders']);
    const meta = await admin.fetchTopicMetadata({ topics: ['orders', 'events'] });
    expect(Object.fromEntries(meta.topics.map((t) => [t.name, t.partitions.length]))).toEqual({
      orders: 4,
      events: 1,
    });
  });

  it('refuses an existing topic, a bad config and a replication factor above 1, with messages', async () => {
    await expect(admin.createTopics({ topics: [{ topic: 'orders' }] })).resolves.toBe(false);
    await expect(
      admin.createTopics({
        topics: [{ topic: 'bad-config', configEntries: [{ name: 'retention.ms', value: 'soon' }] }],
      }),
    ).rejects.toMatchObject({ errors: [{ type: 'INVALID_CONFIG' }] });
    await expect(
      admin.createTopics({ topics: [{ topic: 'replicated', replicationFactor: 3 }] }),
    ).rejects.toMatchObject({ errors: [{ type: 'INVALID_REPLICATION_FACTOR' }] });
  });

  it('validates without creating when validateOnly is set', async () => {
    // kafkajs would wait for the leaders of a topic that, by design, was not created.
    await admin.createTopics({
      topics: [{ topic: 'dry-run', numPartitions: 2 }],
      validateOnly: true,
      waitForLeaders: false,
    });
    expect(await admin.listTopics()).not.toContain('dry-run');
  });

  it('describes topic configs with their sources, and broker configs', async () => {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: 'orders' },
        {
          type: ConfigResourceTypes.BROKER,
          name: '1',
          configNames: ['num.partitions', 'log.retention.ms'],
        },
      ],
    });
    const topic = Object.fromEntries(resources[0]!.configEntries.map((e) => [e.configName, e]));
    expect(topic['cleanup.policy']).toMatchObject({ configValue: 'compact', isDefault: false });
    expect(topic['retention.ms']).toMatchObject({ configValue: '3600000', isDefault: false });
    expect(topic['segment.bytes']).toMatchObject({ configValue: '1073741824', isDefault: true });
    const broker = Object.fromEntries(
      resources[1]!.configEntries.map((e) => [e.configName, e.configValue]),
    );
    expect(broker).toEqual({ 'num.partitions': '1', 'log.retention.ms': '3600000' });
  });

  it('alters topic configs, and the change is described afterwards', async () => {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: 'events',
          configEntries: [{ name: 'retention.ms', value: '1000' }],
        },
      ],
    });
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: 'events', configNames: ['retention.ms'] },
      ],
    });
    expect(resources[0]!.configEntries).toMatchObject([
      { configName: 'retention.ms', configValue: '1000' },
    ]);
  });

  it('adds partitions and refuses to lower the count', async () => {
    await admin.createPartitions({ topicPartitions: [{ topic: 'events', count: 3 }] });
    const meta = await admin.fetchTopicMetadata({ topics: ['events'] });
    expect(meta.topics[0]!.partitions).toHaveLength(3);
    await expect(
      admin.createPartitions({ topicPartitions: [{ topic: 'events', count: 2 }] }),
    ).rejects.toThrow();
  });

  it('deletes topics', async () => {
    await admin.createTopics({ topics: [{ topic: 'doomed', numPartitions: 2 }] });
    await admin.deleteTopics({ topics: ['doomed'] });
    expect(await admin.listTopics()).not.toContain('doomed');
  });

  it('reports earliest and latest offsets and deletes records', async () => {
    const producer = kafka(b.bootstrap).producer();
    await producer.connect();
    await producer.send({
      topic: 'orders',
      messages: Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `${i}` })),
    });
    await producer.disconnect();
    const partition = (await admin.fetchTopicOffsets('orders')).find((p) => p.high === '10')!;
    expect(partition).toMatchObject({ low: '0', high: '10' });
    await admin.deleteTopicRecords({
      topic: 'orders',
      partitions: [{ partition: partition.partition, offset: '4' }],
    });
    const after = (await admin.fetchTopicOffsets('orders')).find(
      (p) => p.partition === partition.partition,
    )!;
    expect(after).toMatchObject({ low: '4', high: '10' });
  });
});
