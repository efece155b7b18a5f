/**
 * The connector API's TopicReader against the embedded broker, with kafkajs writing
 * and reading group offsets: where it starts (seek, the group's committed offset,
 * auto.offset.reset), that it commits without joining the group, and that a topic that
 * does not exist is a retriable refusal.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { KafkaResponseError, TopicReader } from '../../../src/connect/api/index.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
});

afterAll(async () => {
  await broker?.stop();
});

async function topicWith(topic: string, values: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: values.map((value) => ({ key: 'k', value })) });
  await producer.disconnect();
}

function reader(
  topic: string,
  options: Partial<ConstructorParameters<typeof TopicReader>[0]> = {},
) {
  const r = new TopicReader({
    bootstrapServers: broker.bootstrap,
    topic,
    clientId: 'topic-reader-test',
    groupId: null,
    autoOffsetReset: 'earliest',
    ...options,
  });
  onTestFinished(() => r.close());
  return r;
}

const values = (records: Awaited<ReturnType<TopicReader['poll']>>) =>
  records.map((r) => r.value?.toString());

describe('TopicReader', () => {
  it('reads from the earliest offset, or from where it was sought, and moves its position', async () => {
    await topicWith('tr-basic', ['a', 'b', 'c']);
    const fromStart = reader('tr-basic');
    expect(values(await fromStart.poll(100))).toEqual(['a', 'b', 'c']);
    expect(fromStart.position()).toBe(3);
    expect(await fromStart.poll(0)).toEqual([]);

    const sought = reader('tr-basic');
    sought.seek(2);
    expect(values(await sought.poll(100))).toEqual(['c']);
  });

  it('starts at latest with auto.offset.reset=latest', async () => {
    await topicWith('tr-latest', ['old']);
    const r = reader('tr-latest', { autoOffsetReset: 'latest' });
    expect(await r.poll(0)).toEqual([]);
    expect(r.position()).toBe(1);
  });

  it("commits for its group without joining it, and a new reader starts at the group's offset", async () => {
    await topicWith('tr-group', ['a', 'b', 'c']);
    const first = reader('tr-group', { groupId: 'tr-g' });
    await first.poll(100);
    await first.commit(2);

    const admin = kafka.admin();
    await admin.connect();
    onTestFinished(() => admin.disconnect());
    const [offsets] = await admin.fetchOffsets({ groupId: 'tr-g', topics: ['tr-group'] });
    expect(offsets.partitions[0].offset).toBe('2');

    const second = reader('tr-group', { groupId: 'tr-g' });
    expect(values(await second.poll(100))).toEqual(['c']);
  });

  it('refuses a topic that does not exist with a retriable error, and counts its partitions as 0', async () => {
    const r = reader('tr-missing');
    const error = await r.poll(0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaResponseError);
    expect((error as KafkaResponseError).retriable).toBe(true);
    expect(await r.partitionCount()).toBe(0);
  });
});
