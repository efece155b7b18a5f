/**
 * The "consumer" group protocol's embedded formats (Kafka's ConsumerProtocolSubscription
 * and ConsumerProtocolAssignment, both non-flexible) and the range assignor, shared by
 * the broker (which reads subscriptions to describe groups) and the sink tasks' own
 * consumer. Members of a group speaking this protocol can be any Kafka client: Java's
 * consumer, kafkajs and librdkafka all read and write version 0 of both formats and
 * all know "range".
 *
 *   Subscription v0: version int16, topics [string], userData nullable bytes
 *     (v1 adds ownedPartitions, v2 generationId, v3 rackId; they are read past).
 *   Assignment v0:   version int16, assigned [topic string, partitions [int32]],
 *     userData nullable bytes.
 */
import { Reader } from './reader.ts';
import { Writer } from './writer.ts';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
export const RANGE_ASSIGNOR = 'range';

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export function encodeSubscription(topics: readonly string[]): Buffer {
  const w = new Writer(64);
  w.int16(0);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  return Buffer.from(w.finish());
}

/**
 * Topics of a subscription of any version (the list sits at the same place in every
 * one). Malformed bytes yield what could be read: a member's garbage must not stop
 * the leader from assigning the others.
 */
export function decodeConsumerSubscription(bytes: Buffer): string[] {
  const r = new Reader(bytes);
  r.int16();
  const count = r.int32();
  const topics: string[] = [];
  for (let i = 0; i < count && r.ok; i++) {
    const t = r.string();
    if (r.ok) topics.push(t);
  }
  return topics;
}

export function encodeAssignment(assigned: readonly TopicPartitions[]): Buffer {
  const w = new Writer(64);
  w.int16(0);
  w.int32(assigned.length);
  for (const a of assigned) {
    w.string(a.topic);
    w.int32(a.partitions.length);
    for (const p of a.partitions) w.int32(p);
  }
  w.nullableBytes(null);
  return Buffer.from(w.finish());
}

export class ConsumerProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsumerProtocolError';
  }
}

/** An empty buffer is an empty assignment (what a coordinator sends a member left out). */
export function decodeAssignment(bytes: Buffer): TopicPartitions[] {
  if (bytes.length === 0) return [];
  const r = new Reader(bytes);
  r.int16();
  const count = r.int32();
  const out: TopicPartitions[] = [];
  for (let i = 0; i < count && r.ok; i++) {
    const topic = r.string();
    const n = r.int32();
    const partitions: number[] = [];
    for (let j = 0; j < n && r.ok; j++) partitions.push(r.int32());
    out.push({ topic, partitions });
  }
  if (!r.ok) throw new ConsumerProtocolError('the group assignment is malformed');
  return out;
}

/**
 * Kafka's RangeAssignor: per topic, the members subscribed to it in member id order
 * get consecutive ranges of its partitions, the first ones one more when they do not
 * divide evenly. Every member gets an entry, possibly empty.
 */
export function rangeAssign(
  subscriptions: ReadonlyMap<string, readonly string[]>,
  partitionCounts: ReadonlyMap<string, number>,
): Map<string, TopicPartitions[]> {
  const result = new Map<string, TopicPartitions[]>();
  const byTopic = new Map<string, string[]>();
  for (const [member, topics] of subscriptions) {
    result.set(member, []);
    for (const t of new Set(topics)) {
      const list = byTopic.get(t) ?? [];
      list.push(member);
      byTopic.set(t, list);
    }
  }
  for (const [topic, members] of [...byTopic].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const count = partitionCounts.get(topic);
    if (count === undefined || count <= 0) continue;
    members.sort();
    const per = Math.floor(count / members.length);
    const extra = count % members.length;
    let next = 0;
    members.forEach((member, i) => {
      const n = per + (i < extra ? 1 : 0);
      if (n === 0) return;
      const partitions = Array.from({ length: n }, (_, k) => next + k);
      next += n;
      result.get(member)!.push({ topic, partitions });
    });
  }
  return result;
}
