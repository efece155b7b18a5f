/**
 * The group consumer of the sink path (src/protocol/client/group-consumer.ts) against
 * the embedded broker: assignment, offset order, commits and resumption, rebalances
 * between members, seek, pause/resume, topics and partitions that appear later (by
 * name and by regex, internal topics left out), stale-generation commits, out-of-range
 * positions, fatal errors, and a revocation callback slower than the session timeout.
 * Records are produced with kafkajs, an independent client. Every wait polls
 * (test/helpers/wait.ts); no assertion depends on how long something took.
 */
import type { Admin, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import {
  CommitFailedError,
  type ConsumedRecord,
  ConsumerFatalError,
  type FetchedBatch,
  GroupConsumer,
  type GroupConsumerListener,
  type GroupConsumerOptions,
  type TopicPartition,
} from '../../../src/protocol/client/group-consumer.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { startTestBroker, type TestBroker, useBroker } from '../../helpers/broker.ts';
import { waitFor } from '../../helpers/wait.ts';

let broker: TestBroker;
let admin: Admin;
let producer: Producer;

beforeAll(async () => {
  broker = await startTestBroker();
  admin = kafka(broker.bootstrap).admin();
  await admin.connect();
  producer = kafka(broker.bootstrap).producer({ allowAutoTopicCreation: false });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await broker?.stop();
});

let unique = 0;
/** A topic or group name no other test uses. */
const fresh = (prefix: string) => `${prefix}-${++unique}-${process.pid}`;

async function createTopic(topic: string, numPartitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions }] });
}

const valueFor = (partition: number, i: number) => `p${partition}-${i}`;

/** `count` records to each of `partitions`, values p<partition>-<i> for i from `from`. */
async function produce(topic: string, partitions: number[], count: number, from = 0) {
  await producer.send({
    topic,
    messages: partitions.flatMap((partition) =>
      Array.from({ length: count }, (_, k) => ({
        partition,
        key: `k${from + k}`,
        value: valueFor(partition, from + k),
        timestamp: String(1_700_000_000_000 + from + k),
        headers: { h: `hv${from + k}` },
      })),
    ),
  });
}

const tp = (topic: string, partition: number): TopicPartition => ({ topic, partition });
const sorted = (list: readonly TopicPartition[]) =>
  list
    .map((t) => `${t.topic}/${t.partition}`)
    .sort()
    .join(' ');

interface Member {
  consumer: GroupConsumer;
  batches: FetchedBatch[];
  /** Records delivered for a partition, in delivery order. */
  records(topic: string, partition: number): ConsumedRecord[];
  offsets(topic: string, partition: number): number[];
  assigned: TopicPartition[][];
  revoking: TopicPartition[][];
  warns: string[];
  fatal: Error[];
}

/** Starts a consumer with the brief's small timeouts; stopped when the test finishes. */
function startMember(
  groupId: string,
  subscription: GroupConsumerOptions['subscription'],
  options: Partial<GroupConsumerOptions> = {},
  hooks: Partial<GroupConsumerListener> = {},
  bootstrap = broker.bootstrap,
): Member {
  const warns: string[] = [];
  const text = (obj: object | string, msg?: string) =>
    typeof obj === 'string'
      ? obj
      : `${msg ?? ''} ${(obj as { err?: Error }).err?.message ?? JSON.stringify(obj)}`;
  const consumer = new GroupConsumer({
    client: new ClusterClient(bootstrap, { clientId: 'test' }),
    groupId,
    subscription,
    logger: {
      debug: () => {},
      info: () => {},
      warn: (obj, msg) => warns.push(text(obj, msg)),
    },
    sessionTimeoutMs: 6000,
    heartbeatIntervalMs: 500,
    rebalanceTimeoutMs: 10_000,
    fetchMaxBytes: 50 * 1024 * 1024,
    maxPartitionFetchBytes: 1024 * 1024,
    fetchMinBytes: 1,
    fetchMaxWaitMs: 100,
    autoOffsetReset: 'earliest',
    readCommitted: false,
    allowAutoTopicCreation: false,
    metadataMaxAgeMs: 1000,
    retryBackoffMs: 100,
    requestTimeoutMs: 10_000,
    ...options,
  });
  const member: Member = {
    consumer,
    batches: [],
    records: (topic, partition) =>
      member.batches
        .filter((b) => b.topic === topic && b.partition === partition)
        .flatMap((b) => b.records),
    offsets: (topic, partition) => member.records(topic, partition).map((r) => r.offset),
    assigned: [],
    revoking: [],
    warns,
    fatal: [],
  };
  consumer.start({
    onRevoking: async (partitions) => {
      member.revoking.push(partitions);
      await hooks.onRevoking?.(partitions);
    },
    onAssigned: async (partitions) => {
      member.assigned.push(partitions);
      await hooks.onAssigned?.(partitions);
    },
    onBatch: async (batch) => {
      member.batches.push(batch);
      await hooks.onBatch?.(batch);
    },
    onFatal: (error) => {
      member.fatal.push(error);
      hooks.onFatal?.(error);
    },
  });
  onTestFinished(() => consumer.stop());
  return member;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** Waits until the member has been delivered exactly `offsets` of the partition, in order. */
async function delivered(m: Member, topic: string, partition: number, offsets: number[]) {
  await waitFor(`${topic}-${partition} to deliver offsets ${offsets[0]}..${offsets.at(-1)}`, () =>
    m.offsets(topic, partition).length >= offsets.length ? true : undefined,
  );
  expect(m.offsets(topic, partition)).toEqual(offsets);
}

describe('GroupConsumer', () => {
  it('reads every record of a 3-partition topic in offset order per partition', async () => {
    const topic = fresh('all');
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 10);
    await produce(topic, [0, 1, 2], 10, 10);

    const m = startMember(fresh('g-all'), { topics: [topic], regex: null });
    for (const p of [0, 1, 2]) await delivered(m, topic, p, range(0, 20));

    expect(m.assigned).toHaveLength(1);
    expect(sorted(m.assigned[0]!)).toBe(sorted([tp(topic, 0), tp(topic, 1), tp(topic, 2)]));
    expect(sorted(m.consumer.assignment())).toBe(sorted(m.assigned[0]!));
    expect(m.revoking).toEqual([]);
    for (const p of [0, 1, 2]) {
      m.records(topic, p).forEach((r, i) => {
        expect(typeof r.offset).toBe('number');
        expect(r.offset).toBe(i);
        expect(r.timestamp).toBe(1_700_000_000_000 + i);
        expect(Buffer.isBuffer(r.key)).toBe(true);
        expect(Buffer.isBuffer(r.value)).toBe(true);
        expect(r.key!.toString()).toBe(`k${i}`);
        expect(r.value!.toString()).toBe(valueFor(p, i));
        expect(r.headers).toHaveLength(1);
        expect(r.headers[0]!.key).toBe('h');
        expect(r.headers[0]!.value!.toString()).toBe(`hv${i}`);
      });
    }
    // Later records arrive too, after the ones before.
    await produce(topic, [1], 3, 20);
    await delivered(m, topic, 1, range(0, 23));
    expect(m.warns).toEqual([]);
    expect(m.fatal).toEqual([]);
  });

  it('a new member of the group resumes after the committed offsets', async () => {
    const topic = fresh('commit');
    const group = fresh('g-commit');
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 10);

    const first = startMember(group, { topics: [topic], regex: null });
    for (const p of [0, 1, 2]) await delivered(first, topic, p, range(0, 10));
    await first.consumer.commit([
      { topic, partition: 0, offset: 4 },
      { topic, partition: 1, offset: 7, metadata: 'seen' },
      { topic, partition: 2, offset: 10 },
    ]);
    await first.consumer.stop();

    const second = startMember(group, { topics: [topic], regex: null });
    await waitFor('the second member to be assigned', () =>
      second.assigned.length > 0 ? true : undefined,
    );
    await produce(topic, [0, 1, 2], 2, 10);
    await delivered(second, topic, 0, range(4, 12));
    await delivered(second, topic, 1, range(7, 12));
    await delivered(second, topic, 2, range(10, 12));
    expect(second.fatal).toEqual([]);
  });

  it('auto.offset.reset=latest without a commit delivers only records produced after the assignment', async () => {
    const topic = fresh('latest');
    await createTopic(topic, 2);
    await produce(topic, [0, 1], 5);

    const m = startMember(
      fresh('g-latest'),
      { topics: [topic], regex: null },
      { autoOffsetReset: 'latest' },
    );
    await waitFor('the assignment', () => (m.assigned.length > 0 ? true : undefined));
    // The position is taken (ListOffsets latest) after onAssigned, at a moment the test
    // cannot see: records keep coming until each partition has delivered some.
    let next = 5;
    await waitFor('records produced after the assignment', async () => {
      if (m.offsets(topic, 0).length > 0 && m.offsets(topic, 1).length > 0) return true;
      await produce(topic, [0, 1], 1, next++);
      await new Promise((r) => setTimeout(r, 150));
      return undefined;
    });
    for (const p of [0, 1]) {
      const offsets = m.offsets(topic, p);
      expect(offsets[0]).toBeGreaterThanOrEqual(5);
      // Nothing skipped nor repeated from where it started.
      expect(offsets).toEqual(range(offsets[0]!, offsets[0]! + offsets.length));
      for (const r of m.records(topic, p)) expect(r.value!.toString()).toBe(valueFor(p, r.offset));
    }
  });

  it('two members split the partitions and one takes them all when the other leaves', async () => {
    const topic = fresh('split');
    const group = fresh('g-split');
    const all = [tp(topic, 0), tp(topic, 1), tp(topic, 2)];
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 10);

    // A commits half of what it read when it gives its partitions up: a partition it
    // keeps goes on from its position (10), one that moves starts at the commit (5).
    let consumerA: GroupConsumer | undefined;
    const a = startMember(
      group,
      { topics: [topic], regex: null },
      {},
      {
        onRevoking: (partitions) => consumerA!.commit(partitions.map((p) => ({ ...p, offset: 5 }))),
      },
    );
    consumerA = a.consumer;
    await waitFor('a to read everything', () =>
      [0, 1, 2].every((p) => a.offsets(topic, p).length === 10) ? true : undefined,
    );
    expect(sorted(a.assigned[0]!)).toBe(sorted(all));

    const b = startMember(group, { topics: [topic], regex: null });
    await waitFor('the partitions to be split', () => {
      const pa = a.consumer.assignment();
      const pb = b.consumer.assignment();
      return pa.length > 0 && pb.length > 0 && pa.length + pb.length === 3 ? true : undefined;
    });
    // Range over 3 partitions: one member [0,1], the other [2]; disjoint, union all.
    const pa = a.consumer.assignment();
    const pb = b.consumer.assignment();
    expect(sorted([...pa, ...pb])).toBe(sorted(all));
    expect(new Set([pa.length, pb.length])).toEqual(new Set([1, 2]));
    const twoOf = pa.length === 2 ? pa : pb;
    expect(twoOf.map((t) => t.partition).sort()).toEqual([0, 1]);
    // B joining made A give everything up first (eager protocol), once.
    expect(a.revoking).toHaveLength(1);
    expect(sorted(a.revoking[0]!)).toBe(sorted(all));
    expect(a.assigned).toHaveLength(2);
    expect(sorted(a.assigned[1]!)).toBe(sorted(pa));
    expect(b.assigned).toHaveLength(1);
    expect(sorted(b.assigned[0]!)).toBe(sorted(pb));

    await produce(topic, [0, 1, 2], 10, 10);
    for (const { partition } of pa) await delivered(a, topic, partition, range(0, 20));
    for (const { partition } of pb) await delivered(b, topic, partition, range(5, 20));

    await a.consumer.stop();
    await waitFor('b to take every partition', () =>
      b.consumer.assignment().length === 3 ? true : undefined,
    );
    expect(sorted(b.assigned.at(-1)!)).toBe(sorted(all));
    expect(b.revoking.map(sorted)).toEqual([sorted(pb)]);
    await produce(topic, [0, 1, 2], 10, 20);
    // A's partitions continue at its commit; B's own ones where B was.
    for (const { partition } of pa) await delivered(b, topic, partition, range(5, 30));
    for (const { partition } of pb) await delivered(b, topic, partition, range(5, 30));
    // Every record was delivered at least once across both members.
    for (const p of [0, 1, 2]) {
      const seen = new Set([...a.offsets(topic, p), ...b.offsets(topic, p)]);
      expect([...seen].sort((x, y) => x - y)).toEqual(range(0, 30));
    }
    expect([...a.fatal, ...b.fatal]).toEqual([]);
  });

  /**
   * A member of a 2-partition topic that has read offsets 0-4 of both; then, with both
   * paused, offsets 5-6 arrive, and both are resumed together so that one Fetch
   * answers both. `act` runs in onBatch of the first partition handed over, on the
   * consumer and the other partition.
   */
  async function actOnFirstBatchOfAnAnswer(
    name: string,
    act: (consumer: GroupConsumer, other: TopicPartition) => void,
  ) {
    const topic = fresh(name);
    const both = [tp(topic, 0), tp(topic, 1)];
    await createTopic(topic, 2);
    await produce(topic, [0, 1], 5);
    let consumer: GroupConsumer | undefined;
    let armed = false;
    let first: number | undefined;
    const m = startMember(
      fresh(`g-${name}`),
      { topics: [topic], regex: null },
      {},
      {
        onBatch: async (batch) => {
          if (!armed || first !== undefined) return;
          first = batch.partition;
          act(consumer!, tp(topic, 1 - batch.partition));
        },
      },
    );
    consumer = m.consumer;
    for (const p of [0, 1]) await delivered(m, topic, p, range(0, 5));
    m.consumer.pause(both);
    await produce(topic, [0, 1], 2, 5);
    armed = true;
    m.consumer.resume(both);
    await waitFor('the first batch after resuming', () => first);
    return { m, topic, first: first!, other: 1 - first! };
  }

  it('a seek from onBatch back to an earlier offset drops what was already fetched for that partition', async () => {
    const { m, topic, first, other } = await actOnFirstBatchOfAnAnswer('seek-fetched', (c, tpo) =>
      c.seek(tpo, 1),
    );
    await delivered(m, topic, first, range(0, 7));
    await delivered(m, topic, other, [...range(0, 5), ...range(1, 7)]);
  });

  it('a pause from onBatch holds back the other partition of the same answer until resumed', async () => {
    // The next Fetch is sent before records are handed over; what it and the current
    // answer hold for a partition paused meanwhile must come again after the resume.
    const { m, topic, first, other } = await actOnFirstBatchOfAnAnswer('pause-fetched', (c, tpo) =>
      c.pause([tpo]),
    );
    await produce(topic, [0, 1], 3, 7);
    await delivered(m, topic, first, range(0, 10));
    expect(m.offsets(topic, other)).toEqual(range(0, 5));
    m.consumer.resume([tp(topic, other)]);
    await delivered(m, topic, other, range(0, 10));
  });

  it('seek during onAssigned sets where a partition starts; a later seek reads again from there', async () => {
    const topic = fresh('seek');
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 10);
    let consumer: GroupConsumer | undefined;
    const m = startMember(
      fresh('g-seek'),
      { topics: [topic], regex: null },
      {},
      {
        onAssigned: async () => {
          consumer!.seek(tp(topic, 0), 5);
          consumer!.seek(tp(topic, 2), 9);
        },
      },
    );
    consumer = m.consumer;
    await delivered(m, topic, 0, range(5, 10));
    await delivered(m, topic, 1, range(0, 10));
    await delivered(m, topic, 2, [9]);

    m.consumer.seek(tp(topic, 1), 3);
    await delivered(m, topic, 1, [...range(0, 10), ...range(3, 10)]);
    // A partition that is not assigned is ignored.
    m.consumer.seek(tp(topic, 7), 0);
    m.consumer.seek(tp(fresh('other'), 0), 0);
    await produce(topic, [0, 1, 2], 1, 10);
    await delivered(m, topic, 0, range(5, 11));
    await delivered(m, topic, 1, [...range(0, 10), ...range(3, 11)]);
  });

  it('pause stops one partition while the others go on; resume continues without loss or duplicates', async () => {
    const topic = fresh('pause');
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 5);
    const m = startMember(fresh('g-pause'), { topics: [topic], regex: null });
    for (const p of [0, 1, 2]) await delivered(m, topic, p, range(0, 5));

    m.consumer.pause([tp(topic, 0)]);
    // Records for the paused partition first, then for the others: a Fetch that sees the
    // later ones would see the earlier ones too, had partition 0 been fetched.
    await produce(topic, [0], 5, 5);
    await produce(topic, [1, 2], 5, 5);
    await delivered(m, topic, 1, range(0, 10));
    await delivered(m, topic, 2, range(0, 10));
    await produce(topic, [0], 5, 10);
    await produce(topic, [2], 5, 10);
    await delivered(m, topic, 2, range(0, 15));
    expect(m.offsets(topic, 0)).toEqual(range(0, 5));

    m.consumer.resume([tp(topic, 0)]);
    await delivered(m, topic, 0, range(0, 15));
    await produce(topic, [0, 1], 2, 15);
    await delivered(m, topic, 0, range(0, 17));
    await delivered(m, topic, 1, range(0, 12));
  });

  it('waits for a subscribed topic that does not exist yet, then reads it', async () => {
    const topic = fresh('later');
    const m = startMember(fresh('g-later'), { topics: [topic], regex: null });
    await waitFor('a warning naming the missing topic', () =>
      m.warns.some((w) => w.includes(topic)) ? true : undefined,
    );
    await waitFor('the (empty) assignment', () => (m.assigned.length > 0 ? true : undefined));
    expect(m.assigned[0]).toEqual([]);

    await createTopic(topic, 2);
    await produce(topic, [0, 1], 3);
    await waitFor(
      'the new topic to be assigned',
      () => (m.consumer.assignment().length === 2 ? true : undefined),
      10_000,
    );
    expect(sorted(m.assigned.at(-1)!)).toBe(sorted([tp(topic, 0), tp(topic, 1)]));
    await delivered(m, topic, 0, range(0, 3));
    await delivered(m, topic, 1, range(0, 3));
    // Warned once, not on every check.
    expect(m.warns.filter((w) => w.includes(topic))).toHaveLength(1);
  });

  it('a regex subscription picks up a matching topic created later', async () => {
    const prefix = fresh('rx');
    const m = startMember(fresh('g-rx'), { topics: [], regex: new RegExp(`^${prefix}-`) });
    await waitFor('the warning that nothing matches', () =>
      m.warns.some((w) => w.includes(prefix)) ? true : undefined,
    );
    await createTopic(`${prefix}-a`, 2);
    await createTopic(`not-${prefix}-b`, 1);
    await produce(`${prefix}-a`, [0, 1], 4);
    await produce(`not-${prefix}-b`, [0], 4);
    await waitFor(
      'the matching topic to be assigned',
      () => (m.consumer.assignment().length === 2 ? true : undefined),
      10_000,
    );
    await delivered(m, `${prefix}-a`, 0, range(0, 4));
    await delivered(m, `${prefix}-a`, 1, range(0, 4));

    await createTopic(`${prefix}-c`, 1);
    await produce(`${prefix}-c`, [0], 2);
    await delivered(m, `${prefix}-c`, 0, range(0, 2));
    expect(sorted(m.consumer.assignment())).toBe(
      sorted([tp(`${prefix}-a`, 0), tp(`${prefix}-a`, 1), tp(`${prefix}-c`, 0)]),
    );
    expect(m.batches.some((b) => b.topic === `not-${prefix}-b`)).toBe(false);
  });

  it('a commit from a member that lost its membership fails with CommitFailedError', async () => {
    const topic = fresh('stale');
    const group = fresh('g-stale');
    await createTopic(topic, 3);
    await produce(topic, [0, 1, 2], 3);
    // A is stuck in onBatch while B joins: it cannot rejoin, so the coordinator drops
    // it at the (short) rebalance timeout and B forms the next generation alone.
    let release!: () => void;
    const stuck = new Promise<void>((r) => {
      release = r;
    });
    let inBatch = false;
    const a = startMember(
      group,
      { topics: [topic], regex: null },
      { rebalanceTimeoutMs: 1500 },
      {
        onBatch: async () => {
          if (inBatch) return;
          inBatch = true;
          await stuck;
        },
      },
    );
    onTestFinished(() => release());
    await waitFor('a to be in onBatch', () => (inBatch ? true : undefined));

    const b = startMember(group, { topics: [topic], regex: null }, { rebalanceTimeoutMs: 1500 });
    await waitFor('b to be assigned every partition', () =>
      b.assigned.some((list) => list.length === 3) ? true : undefined,
    );
    await expect(a.consumer.commit([{ topic, partition: 0, offset: 1 }])).rejects.toBeInstanceOf(
      CommitFailedError,
    );

    release();
    await waitFor('a to join again and the partitions to be split', () => {
      const pa = a.consumer.assignment();
      const pb = b.consumer.assignment();
      return pa.length > 0 && pb.length > 0 && pa.length + pb.length === 3 ? true : undefined;
    });
    // A's membership had a gap: it first heard that everything was gone.
    expect(a.assigned.slice(1).some((list) => list.length === 0)).toBe(true);
    // The failed commit committed nothing: B read partition 0 from the start.
    expect(b.offsets(topic, 0).slice(0, 3)).toEqual([0, 1, 2]);
  });

  it('a position beyond the log end or below its start is reset per auto.offset.reset, with a warning', async () => {
    const topic = fresh('oor');
    await createTopic(topic, 2);
    await produce(topic, [0, 1], 6);
    const m = startMember(fresh('g-oor'), { topics: [topic], regex: null });
    await delivered(m, topic, 0, range(0, 6));
    await delivered(m, topic, 1, range(0, 6));

    m.consumer.seek(tp(topic, 0), 1_000_000);
    await delivered(m, topic, 0, [...range(0, 6), ...range(0, 6)]);
    expect(m.warns.some((w) => w.includes(`${topic}-0`) && w.includes('out of range'))).toBe(true);
    expect(m.offsets(topic, 1)).toEqual(range(0, 6));

    await produce(topic, [0], 1, 6);
    await delivered(m, topic, 0, [...range(0, 6), ...range(0, 7)]);

    // Below the log start (records deleted): reset to the earliest offset still there.
    await admin.fetchTopicMetadata({ topics: [topic] }); // kafkajs needs the leader known
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '4' }] });
    m.consumer.seek(tp(topic, 1), 0);
    await delivered(m, topic, 1, [...range(0, 6), 4, 5]);
    expect(m.warns.some((w) => w.includes(`${topic}-1`) && w.includes('out of range'))).toBe(true);
    expect(m.fatal).toEqual([]);
  });

  it('notices partitions added to a subscribed topic and keeps the positions of the others', async () => {
    const topic = fresh('grow');
    await createTopic(topic, 1);
    await produce(topic, [0], 3);
    const m = startMember(fresh('g-grow'), { topics: [topic], regex: null });
    await delivered(m, topic, 0, range(0, 3));

    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
    await waitFor('the new partitions to be assigned', () =>
      m.consumer.assignment().length === 3 ? true : undefined,
    );
    expect(m.revoking.map(sorted)).toEqual([sorted([tp(topic, 0)])]);
    expect(sorted(m.assigned.at(-1)!)).toBe(sorted([tp(topic, 0), tp(topic, 1), tp(topic, 2)]));
    // kafkajs's producer would drop records for partitions its metadata does not know yet.
    const grown = kafka(broker.bootstrap).producer();
    await grown.connect();
    onTestFinished(() => grown.disconnect());
    await grown.send({
      topic,
      messages: [0, 1, 2].flatMap((partition) =>
        [3, 4].map((i) => ({ partition, value: valueFor(partition, i) })),
      ),
    });
    // Partition 0 goes on from its position (nothing was committed), the new ones from 0.
    await delivered(m, topic, 0, range(0, 5));
    await delivered(m, topic, 1, range(0, 2));
    await delivered(m, topic, 2, range(0, 2));
  });

  it('auto.offset.reset=none is fatal without a committed offset, and starts at a committed one', async () => {
    const topic = fresh('none');
    const group = fresh('g-none');
    await createTopic(topic, 2);
    await produce(topic, [0, 1], 4);

    const without = startMember(
      group,
      { topics: [topic], regex: null },
      { autoOffsetReset: 'none' },
    );
    const fatal = await waitFor('onFatal', () => without.fatal[0]);
    expect(fatal).toBeInstanceOf(ConsumerFatalError);
    expect(fatal.message).toContain('auto.offset.reset=none');
    expect(without.batches).toEqual([]);
    await without.consumer.stop();

    const other = fresh('g-none-committed');
    const committer = startMember(other, { topics: [topic], regex: null });
    await waitFor('the committer to be assigned', () =>
      committer.consumer.assignment().length === 2 ? true : undefined,
    );
    await committer.consumer.commit([
      { topic, partition: 0, offset: 1 },
      { topic, partition: 1, offset: 3 },
    ]);
    await committer.consumer.stop();
    const withOffsets = startMember(
      other,
      { topics: [topic], regex: null },
      { autoOffsetReset: 'none' },
    );
    await delivered(withOffsets, topic, 0, range(1, 4));
    await delivered(withOffsets, topic, 1, [3]);
    expect(withOffsets.fatal).toEqual([]);
  });

  // A member that stopped on a fatal error must not hold its partitions until its session expires.
  it('stop after a fatal error leaves the group', async () => {
    const topic = fresh('fatal-leave');
    const group = fresh('g-fatal-leave');
    await createTopic(topic, 1);
    const m = startMember(group, { topics: [topic], regex: null }, { autoOffsetReset: 'none' });
    await waitFor('onFatal', () => m.fatal[0]);
    await m.consumer.stop();
    const [described] = (await admin.describeGroups([group])).groups;
    expect(described!.members).toEqual([]);
  });

  // Java's consumer (exclude.internal.topics=true), and so Kafka Connect, never reads
  // __consumer_offsets through a pattern.
  it('a regex subscription leaves internal topics out, as exclude.internal.topics does', async () => {
    // A broker of its own: /.*/ matches every topic there is.
    const own = await useBroker();
    const ownAdmin = kafka(own.bootstrap).admin();
    await ownAdmin.connect();
    onTestFinished(() => ownAdmin.disconnect());
    const ownProducer = kafka(own.bootstrap).producer();
    await ownProducer.connect();
    onTestFinished(() => ownProducer.disconnect());
    const make = async (topic: string) => {
      await ownAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      await ownProducer.send({ topic, messages: [{ value: 'x' }] });
    };
    await make('first');
    const m = startMember(fresh('g-rx-all'), { topics: [], regex: /^.*$/ }, {}, {}, own.bootstrap);
    await waitFor('the first topic to be read', () =>
      m.offsets('first', 0).length > 0 ? true : undefined,
    );
    // Joining made the coordinator create __consumer_offsets; a topic created after it
    // is noticed by a metadata check that sees both.
    await waitFor('__consumer_offsets to exist', async () =>
      (await ownAdmin.listTopics()).includes('__consumer_offsets') ? true : undefined,
    );
    await make('second');
    await waitFor('the second topic to be read', () =>
      m.offsets('second', 0).length > 0 ? true : undefined,
    );
    expect(
      m.consumer
        .assignment()
        .map((t) => t.topic)
        .sort(),
    ).toEqual(['first', 'second']);
    expect(m.batches.filter((b) => b.topic.startsWith('__'))).toEqual([]);
  });
});

describe('GroupConsumer with a listener slower than the session timeout (own broker)', () => {
  let slowBroker: TestBroker;
  beforeAll(async () => {
    slowBroker = await startTestBroker({ config: { 'group.min.session.timeout.ms': 1000 } });
  });
  afterAll(async () => {
    await slowBroker?.stop();
  });

  it('stays in the group while onRevoking flushes and commits for longer than the session timeout', async () => {
    const topic = fresh('slow-revoke');
    const group = fresh('g-slow-revoke');
    const slowAdmin = kafka(slowBroker.bootstrap).admin();
    await slowAdmin.connect();
    onTestFinished(() => slowAdmin.disconnect());
    await slowAdmin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
    const slowProducer = kafka(slowBroker.bootstrap).producer();
    await slowProducer.connect();
    onTestFinished(() => slowProducer.disconnect());
    await slowProducer.send({
      topic,
      messages: [0, 1, 2].flatMap((partition) =>
        [0, 1, 2].map((i) => ({ partition, value: valueFor(partition, i) })),
      ),
    });
    // A session timeout well below the rebalance timeout (max.poll.interval.ms): the
    // coordinator must wait for a member busy in its revocation callback up to the
    // rebalance timeout, as long as the member keeps heartbeating.
    const timeouts = { sessionTimeoutMs: 1500, heartbeatIntervalMs: 200, rebalanceTimeoutMs: 8000 };
    let commit: Promise<unknown> | undefined;
    let consumer: GroupConsumer | undefined;
    const a = startMember(
      group,
      { topics: [topic], regex: null },
      timeouts,
      {
        onRevoking: async (partitions) => {
          if (commit) return;
          // A sink flushing its buffered records before giving the partitions up, busy
          // past two session timeouts: done once the coordinator is seen still holding
          // the rebalance open for it (B's join pending, A still one of two members)
          // after that long, rather than after a fixed sleep.
          const began = Date.now();
          await waitFor(
            'the rebalance still pending with A a member, past two session timeouts',
            async () => {
              const [g] = (await slowAdmin.describeGroups([group])).groups;
              const pending = g.state === 'PreparingRebalance' && g.members.length === 2;
              return pending && Date.now() - began > 2 * timeouts.sessionTimeoutMs
                ? true
                : undefined;
            },
          );
          commit = consumer!.commit(partitions.map((p) => ({ ...p, offset: 3 }))).then(
            () => 'committed',
            (e: Error) => e.name,
          );
          await commit;
        },
      },
      slowBroker.bootstrap,
    );
    consumer = a.consumer;
    await waitFor('a to read everything', () =>
      [0, 1, 2].every((p) => a.offsets(topic, p).length === 3) ? true : undefined,
    );

    const b = startMember(
      group,
      { topics: [topic], regex: null },
      timeouts,
      {},
      slowBroker.bootstrap,
    );
    await waitFor('the partitions to be split', () => {
      const pa = a.consumer.assignment();
      const pb = b.consumer.assignment();
      return pa.length > 0 && pb.length > 0 && pa.length + pb.length === 3 ? true : undefined;
    });
    expect(await commit).toBe('committed');
    // A never left the group: B never held every partition, A never lost everything.
    expect(b.assigned.every((list) => list.length < 3)).toBe(true);
    expect(a.assigned.every((list) => list.length > 0)).toBe(true);
    // Nothing is read again: B starts its partitions at the commit made in onRevoking.
    await slowProducer.send({
      topic,
      messages: [0, 1, 2].map((partition) => ({ partition, value: valueFor(partition, 3) })),
    });
    const both = (p: number) => [...a.offsets(topic, p), ...b.offsets(topic, p)];
    await waitFor('the records produced after the split', () =>
      [0, 1, 2].every((p) => both(p).includes(3)) ? true : undefined,
    );
    for (const p of [0, 1, 2]) expect(both(p).sort((x, y) => x - y)).toEqual([0, 1, 2, 3]);
  });
});
