/**
 * @platformatic/kafka, a current pure-TypeScript client that speaks only the newer,
 * flexible versions (Fetch 12+, ListOffsets 8+, JoinGroup 9, LeaveGroup 5,
 * CreateTopics 7, DeleteTopics 6, Metadata 9-12), against the embedded broker: admin,
 * idempotent produce with each codec it has on Node 20, a consumer group of two
 * members committing by hand, and a restart from the committed offsets. What it
 * writes is read back by kcat (librdkafka), so both ends are checked independently.
 * zstd is left out: the client needs Node 22's zlib for it and refuses it on Node 20.
 */
import {
  Admin,
  Consumer,
  type Message,
  Producer,
  stringDeserializers,
  stringSerializers,
} from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { waitFor } from '../helpers/wait.ts';
import { kafka } from './helpers/kafkajs.ts';
import { consumeAll } from './helpers/kcat.ts';

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker({ config: { 'group.min.session.timeout.ms': 500 } });
});
afterAll(async () => {
  await broker?.stop();
});

const clientOptions = () => ({
  clientId: 'platformatic-conformance',
  bootstrapBrokers: [broker.bootstrap],
});

function useAdmin(): Admin {
  const admin = new Admin(clientOptions());
  onTestFinished(() => admin.close());
  return admin;
}

function useProducer(compression?: 'none' | 'gzip' | 'snappy' | 'lz4') {
  const producer = new Producer({
    ...clientOptions(),
    serializers: stringSerializers,
    idempotent: true,
    ...(compression ? { compression } : {}),
  });
  onTestFinished(() => producer.close());
  return producer;
}

function useConsumer(groupId: string) {
  const consumer = new Consumer({
    ...clientOptions(),
    groupId,
    deserializers: stringDeserializers,
    sessionTimeout: 6000,
    heartbeatInterval: 300,
    rebalanceTimeout: 10_000,
  });
  onTestFinished(() => consumer.close(true));
  return consumer;
}

describe('@platformatic/kafka against the embedded broker', () => {
  it('admin: creates topics, reads their metadata and deletes them', async () => {
    const admin = useAdmin();
    await admin.createTopics({
      topics: ['plat-admin-a', 'plat-admin-b'],
      partitions: 3,
      replicas: 1,
    });
    const meta = await admin.metadata({ topics: ['plat-admin-a', 'plat-admin-b'] });
    expect(meta.topics.get('plat-admin-a')?.partitionsCount).toBe(3);
    expect(meta.topics.get('plat-admin-b')?.partitionsCount).toBe(3);
    expect(meta.topics.get('plat-admin-a')?.id).toMatch(/^[0-9a-f-]{36}$/);
    await admin.deleteTopics({ topics: ['plat-admin-a'] });
    const left = await admin.listTopics();
    expect(left).toContain('plat-admin-b');
    expect(left).not.toContain('plat-admin-a');
  });

  for (const compression of ['none', 'gzip', 'snappy', 'lz4'] as const) {
    it(`produces idempotently with ${compression}, every record once, read back by kcat`, async () => {
      const topic = `plat-${compression}`;
      await useAdmin().createTopics({ topics: [topic], partitions: 2, replicas: 1 });
      const producer = useProducer(compression);
      for (let round = 0; round < 5; round++) {
        await producer.send({
          messages: Array.from({ length: 40 }, (_, i) => ({
            topic,
            key: `k${i % 4}`,
            value: `r${round}-${i}`,
            partition: i % 2,
          })),
        });
      }
      const records = await consumeAll(broker.bootstrap, topic);
      expect(records.map((r) => r.value).sort()).toEqual(
        Array.from({ length: 5 }, (_, round) =>
          Array.from({ length: 40 }, (_, i) => `r${round}-${i}`),
        )
          .flat()
          .sort(),
      );
      // Per partition, in the order sent.
      for (const p of [0, 1]) {
        const values = records.filter((r) => r.partition === p).map((r) => r.value);
        const sent = Array.from({ length: 5 }, (_, round) =>
          Array.from({ length: 40 }, (_, i) => i)
            .filter((i) => i % 2 === p)
            .map((i) => `r${round}-${i}`),
        ).flat();
        expect(values).toEqual(sent);
      }
    });
  }

  it('shares a topic between two group members committing by hand, and resumes from the commits', async () => {
    const topic = 'plat-group';
    await useAdmin().createTopics({ topics: [topic], partitions: 4, replicas: 1 });
    const producer = useProducer();
    const send = (from: number, count: number) =>
      producer.send({
        messages: Array.from({ length: count }, (_, i) => ({
          topic,
          key: `k${from + i}`,
          value: `v${from + i}`,
          partition: (from + i) % 4,
        })),
      });
    await send(0, 200);

    const seen = new Map<string, Set<string>>();
    const run = async (groupId: string, memberName: string) => {
      const consumer = useConsumer(groupId);
      seen.set(memberName, new Set());
      const stream = await consumer.consume({
        topics: [topic],
        autocommit: false,
        mode: 'committed',
        fallbackMode: 'earliest',
        maxWaitTime: 200,
      });
      stream.on('data', (m: Message<string, string, string, string>) => {
        seen.get(memberName)!.add(m.value);
        void m.commit();
      });
      return { consumer, stream };
    };
    const a = await run('plat-group', 'a');
    const b = await run('plat-group', 'b');
    const all = () => new Set([...seen.get('a')!, ...seen.get('b')!]);
    await waitFor(
      '200 records between the two members',
      () => (all().size === 200 ? true : undefined),
      60_000,
    );
    // Both members took part: the group split the four partitions between them.
    await waitFor(
      'both members assigned',
      () =>
        a.consumer.assignments !== null &&
        b.consumer.assignments !== null &&
        (a.consumer.assignments?.length ?? 0) > 0 &&
        (b.consumer.assignments?.length ?? 0) > 0
          ? true
          : undefined,
      30_000,
    );
    // Every commit lands before the members leave (read with kafkajs, independently).
    // This client commits the offset of the last record it read, not the next one as
    // Java's and kafkajs do, and resumes after it: 50 records per partition, 49.
    const kafkajsAdmin = kafka(broker.bootstrap).admin();
    await kafkajsAdmin.connect();
    onTestFinished(() => kafkajsAdmin.disconnect());
    await waitFor(
      'the commits of all 200',
      async () => {
        const [offsets] = await kafkajsAdmin.fetchOffsets({
          groupId: 'plat-group',
          topics: [topic],
        });
        const committed = offsets?.partitions.map((p) => [p.partition, p.offset]).sort();
        const expected = [0, 1, 2, 3].map((p) => [p, '49']);
        if (JSON.stringify(committed) !== JSON.stringify(expected))
          throw new Error(`committed ${JSON.stringify(committed)}`);
        return true;
      },
      30_000,
    );
    await a.stream.close();
    await b.stream.close();
    await a.consumer.close(true);
    await b.consumer.close(true);

    await send(200, 40);
    seen.clear();
    const c = await run('plat-group', 'a');
    seen.set('b', new Set());
    await waitFor('the 40 new records', () => (all().size === 40 ? true : undefined), 60_000);
    await c.stream.close();
    expect([...all()].sort()).toEqual(Array.from({ length: 40 }, (_, i) => `v${200 + i}`).sort());
  });
});
