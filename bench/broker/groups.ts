/**
 * Consumer groups and idempotent producers on the embedded broker (issue 4):
 * - time for a kafkajs group of 1, 3 and 10 members to form (all joined, assignment
 *   received), members starting one after another, with group.initial.rebalance.delay.ms
 *   from INITIAL_DELAY_MS (default 0; Kafka's default is 3000 ms). With no delay each
 *   newcomer triggers a rebalance the others learn of at their next heartbeat, so
 *   formation time grows with members x heartbeat.interval.ms;
 * - consume throughput of a group of 3 over 6 partitions, next to 1 member;
 * - idempotent vs plain kafkajs produce throughput, same records, same run.
 *
 * The broker runs on its own thread, as in a worker process.
 * Run: LOG_LEVEL=warn node --import tsx bench/broker/groups.ts [records]
 * Prints `name: value unit` lines.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Consumer, Kafka, logLevel } from 'kafkajs';
import { startBrokerThread } from '../../src/broker/broker-thread.ts';

const records = Number(process.argv[2] ?? 200_000);

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-groups-'));
const broker = await startBrokerThread({
  host: '127.0.0.1',
  port: 0,
  dataDir: dir,
  nodeId: 1,
  config: {
    'group.initial.rebalance.delay.ms': Number(process.env.INITIAL_DELAY_MS ?? 0),
    'offsets.topic.num.partitions': 4,
    'num.partitions': 6,
  },
});
const kafka = new Kafka({ brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING });
const value = Buffer.alloc(100, 'x');

async function produce(topic: string, idempotent: boolean): Promise<number> {
  const producer = kafka.producer({ idempotent, maxInFlightRequests: idempotent ? 5 : undefined });
  await producer.connect();
  const start = performance.now();
  const batch = 1000;
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < records; i += batch) {
    inflight.push(
      producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: batch }, (_, j) => ({ key: String((i + j) % 64), value })),
      }),
    );
    if (inflight.length >= 5) await inflight.shift();
  }
  await Promise.all(inflight);
  const ms = performance.now() - start;
  await producer.disconnect();
  return ms;
}

async function formGroup(
  groupId: string,
  topic: string,
  members: number,
): Promise<{ ms: number; consumers: Consumer[] }> {
  const consumers: Consumer[] = [];
  const start = performance.now();
  const joined: Promise<void>[] = [];
  for (let i = 0; i < members; i++) {
    const c = kafka.consumer({
      groupId,
      maxWaitTimeInMs: 100,
      sessionTimeout: 10000,
      heartbeatInterval: 1000,
    });
    consumers.push(c);
    joined.push(new Promise((resolve) => c.on(c.events.GROUP_JOIN, () => resolve())));
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({ eachMessage: async () => {} });
  }
  await Promise.all(joined);
  return { ms: performance.now() - start, consumers };
}

/**
 * Consume rate of a stable group: the members join an empty topic, and once the
 * broker reports the group Stable with every member, kcat produces the records; the
 * rate is records over the time until the group has consumed them all. kcat
 * produces well above a million 100-byte records/s here (bench/broker/throughput.ts),
 * so the figure is the group's.
 */
async function groupConsumeRate(members: number): Promise<number> {
  const topic = `consume-${members}`;
  const groupId = `consumers-${members}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 6 }] });
  let seen = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const consumers: Consumer[] = [];
  for (let i = 0; i < members; i++) {
    const c = kafka.consumer({ groupId, maxWaitTimeInMs: 100, maxBytesPerPartition: 4 << 20 });
    consumers.push(c);
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      eachBatch: async ({ batch }) => {
        seen += batch.messages.length;
        if (seen >= records) done();
      },
    });
  }
  for (;;) {
    const g = (await admin.describeGroups([groupId])).groups[0]!;
    if (g.state === 'Stable' && g.members.length === members) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await admin.disconnect();
  const start = performance.now();
  await kcatProduce(topic);
  await finished;
  const ms = performance.now() - start;
  await Promise.all(consumers.map((c) => c.disconnect()));
  return (records / ms) * 1000;
}

function kcatProduce(topic: string): Promise<void> {
  const file = join(dir, `${topic}.txt`);
  writeFileSync(
    file,
    `${Array.from({ length: records }, (_, i) => `${i % 64}:${value}`).join('\n')}\n`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(
      'kcat',
      ['-b', `127.0.0.1:${broker.port}`, '-P', '-t', topic, '-K:', '-l', file],
      {
        stdio: 'ignore',
      },
    );
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`kcat exited ${code}`)),
    );
  });
}

try {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: ['plain', 'idem', 'join'].map((topic) => ({ topic, numPartitions: 6 })),
  });
  await admin.disconnect();

  const plainMs = await produce('plain', false);
  const idemMs = await produce('idem', true);
  line('kafkajs_produce_plain_records_per_s', (records / plainMs) * 1000, 'records/s');
  line('kafkajs_produce_idempotent_records_per_s', (records / idemMs) * 1000, 'records/s');
  line('idempotent_vs_plain_ratio', plainMs / idemMs, 'x');

  for (const members of [1, 3, 10]) {
    const { ms, consumers } = await formGroup(`join-${members}`, 'join', members);
    line(`group_join_${members}_members_ms`, ms, 'ms');
    await Promise.all(consumers.map((c) => c.disconnect()));
  }

  line('group_consume_1_member_records_per_s', await groupConsumeRate(1), 'records/s');
  line('group_consume_3_members_records_per_s', await groupConsumeRate(3), 'records/s');
} finally {
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
}
