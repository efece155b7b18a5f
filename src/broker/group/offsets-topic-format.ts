/**
 * Record keys and values of the `__consumer_offsets` topic, in Kafka's own layout so
 * that tools which read that topic (kafka-consumer-groups, kcat with a decoder) see
 * what they expect. Big-endian, non-flexible versions:
 *
 *   offset commit key   v1: version i16 = 1, group string, topic string, partition i32
 *   offset commit value v3: version i16 = 3, offset i64, leaderEpoch i32,
 *                           metadata string, commitTimestamp i64
 *   group metadata key  v2: version i16 = 2, group string
 *   group metadata value v3: version i16 = 3, protocolType string, generation i32,
 *                           protocol nullable string, leader nullable string,
 *                           currentStateTimestamp i64, members [memberId string,
 *                           groupInstanceId nullable string, clientId string,
 *                           clientHost string, rebalanceTimeout i32, sessionTimeout i32,
 *                           subscription bytes, assignment bytes]
 *
 * Key versions 3-8 are the records of consumer groups (KIP-848), in
 * consumer-group/consumer-group-records.ts; `decodeKey` leaves them to it.
 *
 * A null value (tombstone) deletes the key. Older value versions written by Kafka
 * (offset value v0-v2) are read too, since a data directory could come from Kafka.
 */
import { Reader } from '../../protocol/reader.ts';
import { Writer } from '../../protocol/writer.ts';
import type { GroupSnapshot, OffsetCommitEntry } from './group-coordinator.ts';

export type OffsetsTopicKey =
  | { kind: 'offset'; groupId: string; topic: string; partition: number }
  | { kind: 'group'; groupId: string };

export function encodeOffsetKey(groupId: string, topic: string, partition: number): Buffer {
  const w = new Writer(64);
  w.int16(1);
  w.string(groupId);
  w.string(topic);
  w.int32(partition);
  return w.finish();
}

export function encodeGroupKey(groupId: string): Buffer {
  const w = new Writer(32);
  w.int16(2);
  w.string(groupId);
  return w.finish();
}

export function decodeKey(bytes: Buffer): OffsetsTopicKey | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version === 0 || version === 1) {
    const groupId = r.string();
    const topic = r.string();
    const partition = r.int32();
    return r.ok ? { kind: 'offset', groupId, topic, partition } : undefined;
  }
  if (version === 2) {
    const groupId = r.string();
    return r.ok ? { kind: 'group', groupId } : undefined;
  }
  return undefined;
}

export function encodeOffsetValue(o: OffsetCommitEntry & { commitTimestamp: number }): Buffer {
  const w = new Writer(64);
  w.int16(3);
  w.int64(BigInt(o.offset));
  w.int32(o.leaderEpoch);
  w.string(o.metadata ?? '');
  w.int64(BigInt(o.commitTimestamp));
  return w.finish();
}

export function decodeOffsetValue(
  bytes: Buffer,
): { offset: number; leaderEpoch: number; metadata: string; commitTimestamp: number } | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  const offset = Number(r.int64());
  const leaderEpoch = version >= 3 ? r.int32() : -1;
  const metadata = r.string();
  const commitTimestamp = Number(r.int64());
  // v1 also carries an expire timestamp after the commit timestamp; it is not used.
  return r.ok && version >= 0 && version <= 4
    ? { offset, leaderEpoch, metadata, commitTimestamp }
    : undefined;
}

export function encodeGroupValue(g: GroupSnapshot, now: number): Buffer {
  const w = new Writer(256);
  w.int16(3);
  w.string(g.protocolType ?? '');
  w.int32(g.generationId);
  w.nullableString(g.protocolName);
  w.nullableString(g.leaderId);
  w.int64(BigInt(now));
  w.int32(g.members.length);
  for (const m of g.members) {
    w.string(m.memberId);
    w.nullableString(m.groupInstanceId);
    w.string(m.clientId);
    w.string(m.clientHost);
    w.int32(m.rebalanceTimeoutMs);
    w.int32(m.sessionTimeoutMs);
    w.bytes(m.metadata);
    w.bytes(m.assignment);
  }
  return w.finish();
}

export function decodeGroupValue(groupId: string, bytes: Buffer): GroupSnapshot | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version !== 3) return undefined;
  const protocolType = r.string();
  const generationId = r.int32();
  const protocolName = r.nullableString();
  const leaderId = r.nullableString();
  r.int64();
  const count = r.int32();
  const members: GroupSnapshot['members'] = [];
  for (let i = 0; i < count && r.ok; i++) {
    members.push({
      memberId: r.string(),
      groupInstanceId: r.nullableString(),
      clientId: r.string(),
      clientHost: r.string(),
      rebalanceTimeoutMs: r.int32(),
      sessionTimeoutMs: r.int32(),
      metadata: Buffer.from(r.bytes()),
      assignment: Buffer.from(r.bytes()),
    });
  }
  return r.ok
    ? { groupId, protocolType, generationId, protocolName, leaderId, members }
    : undefined;
}

/** Java's String.hashCode, so a group lands on the same partition as in Kafka. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's partitionFor: Utils.abs(groupId.hashCode) % partitions (abs maps MIN_VALUE to 0). */
export function offsetsPartitionFor(groupId: string, partitions: number): number {
  const h = javaStringHash(groupId);
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}
