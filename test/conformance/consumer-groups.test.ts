import { AssignerProtocol, type Consumer } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestBroker, useBroker } from '../helpers/broker.ts';
import { useProcess } from '../helpers/processes.ts';
import { useTmpDir } from '../helpers/tmp-dir.ts';
import { kafka } from './helpers/kafkajs.ts';
import { kcat } from './helpers/kcat.ts';

const consumers: Consumer[] = [];
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.disconnect().catch(() => {})));
});

async function member(bootstrap: string, groupId: string, topic: string): Promise<Consumer> {
  const consumer = kafka(bootstrap).consumer({
    groupId,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    rebalanceTimeout: 10000,
    maxWaitTimeInMs: 200,
  });
  consumers.push(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async () => {} });
  return consumer;
}

/** The broker's view of a stable group: partitions per member, as the leader assigned them. */
async function stableAssignment(
  bootstrap: string,
  groupId: string,
  members: number,
): Promise<number[][]> {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  try {
    for (let attempt = 0; attempt < 300; attempt++) {
      const { groups } = await admin.describeGroups([groupId]);
      const g = groups[0]!;
      if (g.state === 'Stable' && g.members.length === members) {
        return g.members.map((m) => {
          const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
          return Object.values(decoded?.assignment ?? {})
            .flat()
            .sort((a, b) => a - b);
        });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`group ${groupId} did not become stable with ${members} members`);
  } finally {
    await admin.disconnect();
  }
}

/** Every partition owned by exactly one member of the generation. */
function expectPartitioned(assignment: number[][], partitions: number): void {
  const all = assignment.flat().sort((a, b) => a - b);
  expect(all).toEqual(Array.from({ length: partitions }, (_, i) => i));
}

describe('consumer groups with real clients', () => {
  it('spreads six partitions over three kafkajs members and rebalances on a clean leave and on a kill', async () => {
    const b = await useBroker();
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'six', numPartitions: 6 }] });
    await admin.disconnect();

    const a = await member(b.bootstrap, 'trio', 'six');
    const leaving = await member(b.bootstrap, 'trio', 'six');
    const killable = useProcess(process.execPath, [
      '--import',
      'tsx',
      'test/conformance/fixtures/group-member.ts',
      b.bootstrap,
      'trio',
      'six',
    ]);
    await killable.waitForLine('joined');

    const three = await stableAssignment(b.bootstrap, 'trio', 3);
    expect(three.map((p) => p.length)).toEqual([2, 2, 2]);
    expectPartitioned(three, 6);

    await leaving.disconnect();
    const two = await stableAssignment(b.bootstrap, 'trio', 2);
    expect(two.map((p) => p.length)).toEqual([3, 3]);
    expectPartitioned(two, 6);

    killable.signal('SIGKILL');
    const one = await stableAssignment(b.bootstrap, 'trio', 1);
    expectPartitioned(one, 6);
    expect(a).toBeDefined();
  });

  it('resumes a kafkajs group from its committed offsets after a broker restart', async () => {
    const dataDir = useTmpDir('groups-restart-');
    const first = await startTestBroker({ dataDir });
    try {
      const producer = kafka(first.bootstrap).producer();
      await producer.connect();
      await producer.send({
        topic: 'resume',
        messages: Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 4}`, value: `old-${i}` })),
      });
      await producer.disconnect();
      const seen = await consumeUntil(first.bootstrap, 'resumers', 'resume', 40);
      expect(seen).toHaveLength(40);
    } finally {
      await first.stop();
    }
    const second = await startTestBroker({ dataDir });
    try {
      const producer = kafka(second.bootstrap).producer();
      await producer.connect();
      await producer.send({
        topic: 'resume',
        messages: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `new-${i}` })),
      });
      await producer.disconnect();
      const seen = await consumeUntil(second.bootstrap, 'resumers', 'resume', 5);
      expect(seen.sort()).toEqual(['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
    } finally {
      await second.stop();
    }
  });

  it('gives a librdkafka balanced consumer (kcat -G) its partitions and keeps its commits across a restart', async () => {
    const dataDir = useTmpDir('kcat-group-');
    const lines = Array.from({ length: 30 }, (_, i) => `k${i}:v${i}`).join('\n');
    const args = (bootstrap: string) => [
      '-b',
      bootstrap,
      '-G',
      'kcat-group',
      '-X',
      'auto.offset.reset=earliest',
      '-e',
      '-q',
      '-f',
      '%p %o %s\n',
      'kcat-topic',
    ];
    const first = await startTestBroker({ dataDir, config: { 'num.partitions': 3 } });
    try {
      await kcat(['-b', first.bootstrap, '-P', '-t', 'kcat-topic', '-K:'], `${lines}\n`);
      const read = (await kcat(args(first.bootstrap))).stdout.trim().split('\n');
      expect(read).toHaveLength(30);
      expect(new Set(read.map((l) => l.split(' ')[0]))).toEqual(new Set(['0', '1', '2']));
    } finally {
      await first.stop();
    }
    const second = await startTestBroker({ dataDir });
    try {
      await kcat(['-b', second.bootstrap, '-P', '-t', 'kcat-topic', '-K:'], 'late:arrival\n');
      const read = (await kcat(args(second.bootstrap))).stdout.trim().split('\n');
      expect(read.map((l) => l.split(' ')[2])).toEqual(['arrival']);
    } finally {
      await second.stop();
    }
  });
});

/** Consumes with a group until `count` messages arrived, committing as it goes, then leaves. */
async function consumeUntil(
  bootstrap: string,
  groupId: string,
  topic: string,
  count: number,
): Promise<string[]> {
  const consumer = kafka(bootstrap).consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommitThreshold: 1,
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === count) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return seen;
}
