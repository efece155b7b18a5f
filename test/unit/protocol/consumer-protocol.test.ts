/**
 * The "consumer" group protocol's subscription and assignment formats and the range
 * assignor (src/protocol/consumer-protocol.ts). kafkajs 2.2.4's AssignerProtocol is the
 * independent implementation the bytes are checked against; the assignor's expected
 * results are what Kafka's RangeAssignor gives.
 */
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  ConsumerProtocolError,
  decodeAssignment,
  decodeConsumerSubscription,
  encodeAssignment,
  encodeSubscription,
  rangeAssign,
  type TopicPartitions,
} from '../../../src/protocol/consumer-protocol.ts';
import { Writer } from '../../../src/protocol/writer.ts';

const { AssignerProtocol } = kafkajs;

/** A subscription of version 1 and up: ownedPartitions (and later fields) after userData. */
function subscriptionV1(topics: string[], userData: Buffer | null): Buffer {
  const w = new Writer();
  w.int16(1);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(userData);
  // ownedPartitions: [topic string, partitions [int32]]
  w.int32(2);
  w.string('owned-a');
  w.int32(2);
  w.int32(0);
  w.int32(3);
  w.string('owned-b');
  w.int32(1);
  w.int32(7);
  // v2 generationId, v3 rackId
  w.int32(12);
  w.nullableString('rack-1');
  return Buffer.from(w.finish());
}

describe('subscription', () => {
  it('round-trips', () => {
    for (const topics of [[], ['orders'], ['orders', 'users', 'a.b-c_d'], ['ü-topic']]) {
      expect(decodeConsumerSubscription(encodeSubscription(topics))).toEqual(topics);
    }
  });

  it('is what kafkajs reads as MemberMetadata v0', () => {
    const decoded = AssignerProtocol.MemberMetadata.decode(
      encodeSubscription(['orders', 'users']),
    ) as { version: number; topics: string[]; userData: Buffer | null } | null;
    expect(decoded).not.toBeNull();
    expect(decoded!.version).toBe(0);
    expect(decoded!.topics).toEqual(['orders', 'users']);
    expect(decoded!.userData).toBeNull();
  });

  it('reads the topics of a subscription kafkajs wrote', () => {
    const bytes = AssignerProtocol.MemberMetadata.encode({
      version: 0,
      topics: ['t1', 't2'],
      userData: Buffer.from('ud'),
    });
    expect(decodeConsumerSubscription(bytes)).toEqual(['t1', 't2']);
  });

  it('reads the topics of a v1+ subscription, past userData and ownedPartitions', () => {
    expect(decodeConsumerSubscription(subscriptionV1(['x', 'y'], Buffer.from([1, 2, 3])))).toEqual([
      'x',
      'y',
    ]);
    expect(decodeConsumerSubscription(subscriptionV1(['only'], null))).toEqual(['only']);
  });

  it('reads garbage without throwing, keeping what could be read', () => {
    expect(decodeConsumerSubscription(Buffer.alloc(0))).toEqual([]);
    expect(decodeConsumerSubscription(Buffer.from([0]))).toEqual([]);
    expect(decodeConsumerSubscription(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toEqual(
      [],
    );
    // A count far beyond the bytes present.
    expect(decodeConsumerSubscription(Buffer.from([0, 0, 0x7f, 0xff, 0xff, 0xff]))).toEqual([]);
    // Cut in the middle of the second topic: the first is kept.
    const whole = encodeSubscription(['first', 'second']);
    expect(decodeConsumerSubscription(whole.subarray(0, whole.length - 8))).toEqual(['first']);
    // Random bytes never throw.
    let seed = 42;
    for (let i = 0; i < 500; i++) {
      const bytes = Buffer.alloc(i % 40);
      for (let j = 0; j < bytes.length; j++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        bytes[j] = seed & 0xff;
      }
      expect(() => decodeConsumerSubscription(bytes)).not.toThrow();
    }
  });
});

describe('assignment', () => {
  it('round-trips', () => {
    const cases: TopicPartitions[][] = [
      [],
      [{ topic: 'orders', partitions: [0, 1, 2] }],
      [
        { topic: 'a', partitions: [4] },
        { topic: 'b', partitions: [] },
        { topic: 'c', partitions: [0, 2147483647] },
      ],
    ];
    for (const assigned of cases) {
      expect(decodeAssignment(encodeAssignment(assigned))).toEqual(assigned);
    }
  });

  it('is what kafkajs reads as MemberAssignment v0', () => {
    const decoded = AssignerProtocol.MemberAssignment.decode(
      encodeAssignment([
        { topic: 'orders', partitions: [0, 1, 2] },
        { topic: 'users', partitions: [3] },
      ]),
    ) as { version: number; assignment: Record<string, number[]>; userData: Buffer | null } | null;
    expect(decoded).not.toBeNull();
    expect(decoded!.version).toBe(0);
    expect(decoded!.assignment).toEqual({ orders: [0, 1, 2], users: [3] });
    expect(decoded!.userData).toBeNull();
  });

  it('reads an assignment kafkajs wrote', () => {
    const bytes = AssignerProtocol.MemberAssignment.encode({
      version: 0,
      assignment: { t1: [0, 2], t2: [1] },
      userData: Buffer.from('x'),
    });
    expect(decodeAssignment(bytes)).toEqual([
      { topic: 't1', partitions: [0, 2] },
      { topic: 't2', partitions: [1] },
    ]);
  });

  it('an empty buffer is an empty assignment', () => {
    expect(decodeAssignment(Buffer.alloc(0))).toEqual([]);
  });

  it('a malformed assignment throws ConsumerProtocolError', () => {
    const whole = encodeAssignment([{ topic: 'orders', partitions: [0, 1, 2] }]);
    // Cut inside the partition list.
    expect(() => decodeAssignment(whole.subarray(0, whole.length - 10))).toThrow(
      ConsumerProtocolError,
    );
    // Only a version.
    expect(() => decodeAssignment(Buffer.from([0, 0]))).toThrow(ConsumerProtocolError);
    // One byte.
    expect(() => decodeAssignment(Buffer.from([0]))).toThrow(ConsumerProtocolError);
    // A topic count far beyond the bytes present.
    expect(() => decodeAssignment(Buffer.from([0, 0, 0x7f, 0xff, 0xff, 0xff]))).toThrow(
      ConsumerProtocolError,
    );
    // A partition count far beyond the bytes present.
    const w = new Writer();
    w.int16(0);
    w.int32(1);
    w.string('t');
    w.int32(1_000_000);
    w.int32(0);
    expect(() => decodeAssignment(Buffer.from(w.finish()))).toThrow(ConsumerProtocolError);
  });
});

/** rangeAssign's result as a plain object, for readable expectations. */
function assign(
  subscriptions: Record<string, string[]>,
  counts: Record<string, number>,
): Record<string, TopicPartitions[]> {
  return Object.fromEntries(
    rangeAssign(new Map(Object.entries(subscriptions)), new Map(Object.entries(counts))),
  );
}

describe('rangeAssign', () => {
  it('gives consecutive ranges, the first members one more when they do not divide evenly', () => {
    expect(assign({ m1: ['t'], m2: ['t'] }, { t: 5 })).toEqual({
      m1: [{ topic: 't', partitions: [0, 1, 2] }],
      m2: [{ topic: 't', partitions: [3, 4] }],
    });
    expect(assign({ a: ['t'], b: ['t'], c: ['t'] }, { t: 7 })).toEqual({
      a: [{ topic: 't', partitions: [0, 1, 2] }],
      b: [{ topic: 't', partitions: [3, 4] }],
      c: [{ topic: 't', partitions: [5, 6] }],
    });
    expect(assign({ a: ['t'], b: ['t'] }, { t: 4 })).toEqual({
      a: [{ topic: 't', partitions: [0, 1] }],
      b: [{ topic: 't', partitions: [2, 3] }],
    });
  });

  it('orders members by id, not by the order they are listed in', () => {
    expect(assign({ 'member-b': ['t'], 'member-c': ['t'], 'member-a': ['t'] }, { t: 4 })).toEqual({
      'member-a': [{ topic: 't', partitions: [0, 1] }],
      'member-b': [{ topic: 't', partitions: [2] }],
      'member-c': [{ topic: 't', partitions: [3] }],
    });
  });

  it('assigns each topic separately (range is per topic, as in Kafka)', () => {
    // Kafka's RangeAssignor: the first member gets the extra partition of every topic.
    expect(assign({ c1: ['t0', 't1'], c0: ['t0', 't1'] }, { t0: 3, t1: 3 })).toEqual({
      c0: [
        { topic: 't0', partitions: [0, 1] },
        { topic: 't1', partitions: [0, 1] },
      ],
      c1: [
        { topic: 't0', partitions: [2] },
        { topic: 't1', partitions: [2] },
      ],
    });
  });

  it('gives a member nothing of a topic it is not subscribed to', () => {
    expect(assign({ a: ['t1'], b: ['t1', 't2'], c: ['t2'] }, { t1: 2, t2: 3 })).toEqual({
      a: [{ topic: 't1', partitions: [0] }],
      b: [
        { topic: 't1', partitions: [1] },
        { topic: 't2', partitions: [0, 1] },
      ],
      c: [{ topic: 't2', partitions: [2] }],
    });
  });

  it('skips a topic missing from the partition counts', () => {
    expect(assign({ a: ['t', 'gone'], b: ['gone'] }, { t: 2 })).toEqual({
      a: [{ topic: 't', partitions: [0, 1] }],
      b: [],
    });
  });

  it('gives every member an entry, empty when there are more members than partitions', () => {
    expect(assign({ a: ['t'], b: ['t'], c: ['t'] }, { t: 2 })).toEqual({
      a: [{ topic: 't', partitions: [0] }],
      b: [{ topic: 't', partitions: [1] }],
      c: [],
    });
    expect(assign({ a: [], b: ['nothing'] }, {})).toEqual({ a: [], b: [] });
    expect(assign({}, { t: 3 })).toEqual({});
  });

  it('counts a topic listed twice in one subscription once', () => {
    expect(assign({ a: ['t', 't'], b: ['t'] }, { t: 4 })).toEqual({
      a: [{ topic: 't', partitions: [0, 1] }],
      b: [{ topic: 't', partitions: [2, 3] }],
    });
  });

  it('assigns every partition exactly once', () => {
    const members = Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [`m${i}`, ['x', 'y', 'z']]),
    );
    const counts = { x: 1, y: 7, z: 13 };
    const result = assign(members, counts);
    for (const [topic, n] of Object.entries(counts)) {
      const all = Object.values(result)
        .flatMap((list) => list.filter((a) => a.topic === topic).flatMap((a) => a.partitions))
        .sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  });
});
