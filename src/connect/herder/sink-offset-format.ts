/**
 * The REST format of a sink connector's offsets (KIP-875), and its validation:
 *   {"partition": {"kafka_topic": "<topic>", "kafka_partition": <int>},
 *    "offset":    {"kafka_offset": <long>} | null}
 * A null offset resets that partition (its committed offset is deleted). As in Kafka
 * Connect (SinkUtils.parseSinkConnectorOffsets), partitions and offsets may be given as
 * JSON numbers or as strings of digits ("10" and 10 both work), and a partition given
 * twice keeps its last offset.
 *
 * Invariant: `parseSinkOffsets` checks every entry before answering, so a request is
 * refused whole (HerderError `bad-request`, HTTP 400) before anything reads or writes the
 * consumer group; what it returns is safe to hand to the group coordinator. Beyond
 * Kafka Connect's checks it also refuses negative partitions and offsets (the Java
 * admin client throws on those only once it is writing, and kafkajs takes -1 and -2 for
 * "latest" and "earliest"), illegal topic names, and keys it does not know: nothing is
 * accepted and ignored.
 */
import type { ConnectorOffset } from './herder.ts';
import { HerderError } from './herder.ts';

export const KAFKA_TOPIC_KEY = 'kafka_topic';
export const KAFKA_PARTITION_KEY = 'kafka_partition';
export const KAFKA_OFFSET_KEY = 'kafka_offset';

/** One validated entry: `offset` null resets the partition. */
export interface SinkOffset {
  topic: string;
  partition: number;
  offset: number | null;
}

const INT32_MAX = 2n ** 31n - 1n;
const INT64_MAX = 2n ** 63n - 1n;
const MAX_OFFSET = BigInt(Number.MAX_SAFE_INTEGER);
/** What Java's Integer.parseInt / Long.parseLong accept, before the range check. */
const INTEGER_TEXT = /^[+-]?\d+$/;
/** Kafka's Topic.validate: at most 249 characters of [a-zA-Z0-9._-], not "." or "..". */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

/** Kafka Connect's messages (SinkUtils), then ours for the checks it does not make. */
export const sinkOffsetMessages = {
  nullPartition: 'The partition for a sink connector offset cannot be null or missing',
  partitionKeys: `The partition for a sink connector offset must contain the keys '${KAFKA_TOPIC_KEY}' and '${KAFKA_PARTITION_KEY}'`,
  nullTopic: 'Kafka topic names must be valid strings and may not be null',
  nullPartitionValue: 'Kafka partitions must be valid numbers and may not be null',
  badPartition: (value: string) =>
    `Failed to parse the following Kafka partition value in the provided offsets: '${value}'. Partition values for sink connectors need to be integers.`,
  offsetKey: `The offset for a sink connector should either be null or contain the key '${KAFKA_OFFSET_KEY}'`,
  badOffset: (value: string) =>
    `Failed to parse the following Kafka offset value in the provided offsets: '${value}'. Offset values for sink connectors need to be integers.`,
  negativePartition: (value: string) =>
    `Invalid Kafka partition value in the provided offsets: '${value}'. Partition values for sink connectors need to be non-negative integers.`,
  negativeOffset: (value: string) =>
    `Invalid Kafka offset value in the provided offsets: '${value}'. Offset values for sink connectors need to be non-negative integers.`,
  offsetTooLarge: (value: string) =>
    `Invalid Kafka offset value in the provided offsets: '${value}'. Offset values for sink connectors above ${Number.MAX_SAFE_INTEGER} are not supported.`,
  illegalTopic: (value: string) =>
    `Invalid Kafka topic name in the provided offsets: '${value}'. Topic names are 1 to 249 characters of ASCII letters, digits, '.', '_' and '-', and neither '.' nor '..'.`,
  unknownPartitionKey: (key: string) =>
    `The partition for a sink connector offset may only contain the keys '${KAFKA_TOPIC_KEY}' and '${KAFKA_PARTITION_KEY}', but it also contains '${key}'`,
  unknownOffsetKey: (key: string) =>
    `The offset for a sink connector may only contain the key '${KAFKA_OFFSET_KEY}', but it also contains '${key}'`,
} as const;

/** Every entry checked, then parsed; a HerderError `bad-request` for the first bad one. */
export function parseSinkOffsets(offsets: readonly ConnectorOffset[]): SinkOffset[] {
  const byPartition = new Map<string, SinkOffset>();
  for (const entry of offsets) {
    const parsed = parseEntry(entry);
    const key = `${parsed.topic}\u0000${parsed.partition}`;
    // Last one wins, as in Kafka Connect's map of partitions to offsets.
    byPartition.delete(key);
    byPartition.set(key, parsed);
  }
  return [...byPartition.values()];
}

function parseEntry(entry: ConnectorOffset): SinkOffset {
  const partitionMap = entry.partition as Record<string, unknown> | null | undefined;
  if (partitionMap === null || typeof partitionMap !== 'object') {
    throw badRequest(sinkOffsetMessages.nullPartition);
  }
  if (!(KAFKA_TOPIC_KEY in partitionMap) || !(KAFKA_PARTITION_KEY in partitionMap)) {
    throw badRequest(sinkOffsetMessages.partitionKeys);
  }
  const extraPartitionKey = Object.keys(partitionMap).find(
    (k) => k !== KAFKA_TOPIC_KEY && k !== KAFKA_PARTITION_KEY,
  );
  if (extraPartitionKey !== undefined) {
    throw badRequest(sinkOffsetMessages.unknownPartitionKey(extraPartitionKey));
  }
  const topic = partitionMap[KAFKA_TOPIC_KEY];
  if (typeof topic !== 'string') throw badRequest(sinkOffsetMessages.nullTopic);
  if (!LEGAL_TOPIC.test(topic) || topic === '.' || topic === '..') {
    throw badRequest(sinkOffsetMessages.illegalTopic(topic));
  }
  const rawPartition = partitionMap[KAFKA_PARTITION_KEY];
  if (rawPartition === null || rawPartition === undefined) {
    throw badRequest(sinkOffsetMessages.nullPartitionValue);
  }
  const partition = parseInteger(rawPartition, INT32_MAX);
  if (partition === undefined)
    throw badRequest(sinkOffsetMessages.badPartition(shown(rawPartition)));
  if (partition < 0n) throw badRequest(sinkOffsetMessages.negativePartition(shown(rawPartition)));

  const offsetMap = entry.offset as Record<string, unknown> | null | undefined;
  if (offsetMap === null || offsetMap === undefined) {
    return { topic, partition: Number(partition), offset: null };
  }
  if (typeof offsetMap !== 'object' || !(KAFKA_OFFSET_KEY in offsetMap)) {
    throw badRequest(sinkOffsetMessages.offsetKey);
  }
  const extraOffsetKey = Object.keys(offsetMap).find((k) => k !== KAFKA_OFFSET_KEY);
  if (extraOffsetKey !== undefined) {
    throw badRequest(sinkOffsetMessages.unknownOffsetKey(extraOffsetKey));
  }
  const rawOffset = offsetMap[KAFKA_OFFSET_KEY];
  const offset = parseInteger(rawOffset, INT64_MAX);
  if (offset === undefined) throw badRequest(sinkOffsetMessages.badOffset(shown(rawOffset)));
  if (offset < 0n) throw badRequest(sinkOffsetMessages.negativeOffset(shown(rawOffset)));
  // Offsets travel as JS numbers to connectors' alterOffsets; no log is this long.
  if (offset > MAX_OFFSET) throw badRequest(sinkOffsetMessages.offsetTooLarge(shown(rawOffset)));
  return { topic, partition: Number(partition), offset: Number(offset) };
}

/**
 * A JSON number or a string of digits, as Java's parseInt/parseLong of String.valueOf
 * reads it; undefined for anything else (fractions, exponents, booleans, objects) and
 * for values beyond `max` in magnitude.
 */
function parseInteger(value: unknown, max: bigint): bigint | undefined {
  let n: bigint;
  if (typeof value === 'number' && Number.isInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && INTEGER_TEXT.test(value)) n = BigInt(value);
  else return undefined;
  return n > max || n < -max - 1n ? undefined : n;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function badRequest(message: string): HerderError {
  return new HerderError('bad-request', message);
}
