/**
 * DescribeTopicPartitions (key 75, KIP-966): the topics' partitions as Metadata
 * describes them (this node leads each, at LEADER_EPOCH, alone in replicas and ISR),
 * plus the eligible leader replicas, which a single node never has, and paged.
 *
 * Paging, as Kafka's DescribeTopicPartitionsRequestHandler and
 * KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse do it: topics in name
 * order, from the cursor's topic (and, in it, the cursor's partition) on; at most
 * responsePartitionLimit partitions (at least 1, at most Kafka's default
 * max.request.partition.size.limit, 2000); nextCursor names the first partition left
 * out, or the next topic when the limit ran out exactly at a topic's end.
 *
 * An empty topic list asks for every topic. A listed topic that does not exist is
 * UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION if its name is not a legal one).
 * A cursor whose topic is not in the list, or whose partition is negative, makes the
 * request invalid: every listed topic answers INVALID_REQUEST, as Kafka answers it.
 *
 * Topic authorized operations: every operation Kafka defines for a topic, on every
 * topic answered, since there are no ACLs (Kafka fills them in for each, unasked).
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { ZERO_UUID } from '../../protocol/sentinels.ts';
import { LogError } from '../log/errors.ts';
import type { TopicDescription } from '../log/log-manager.ts';
import { LEADER_EPOCH } from '../log/partition-log.ts';
import { validateTopicName } from '../log/topic-name.ts';
import { TOPIC_OPERATIONS } from './authorized-operations.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

/** Kafka's max.request.partition.size.limit default: the most partitions one answer holds. */
const MAX_PARTITION_LIMIT = 2000;

interface Cursor {
  topicName: string;
  partitionIndex: number;
}

export const handleDescribeTopicPartitions: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) => {
  const { logs, nodeId } = services;
  const requested = (body.topics as Array<{ name: string }>).map((t) => t.name);
  const cursor = body.cursor as Cursor | null;
  const all = requested.length === 0;
  const from = cursor?.topicName ?? '';
  const names = new Set(
    (all ? logs.topics().map((t) => t.name) : requested).filter((n) => n >= from),
  );
  if (
    (cursor !== null && !all && !names.has(cursor.topicName)) ||
    (cursor?.partitionIndex ?? 0) < 0
  )
    return { throttleTimeMs: 0, topics: requested.map(invalidRequest), nextCursor: null };

  let remaining = Math.max(Math.min(MAX_PARTITION_LIMIT, body.responsePartitionLimit as number), 1);
  const topics: Message[] = [];
  let nextCursor: Cursor | null = null;
  for (const name of [...names].sort()) {
    if (remaining === 0) {
      nextCursor = { topicName: name, partitionIndex: 0 };
      break;
    }
    const topic = logs.topic(name);
    if (topic === undefined) {
      if (!all) topics.push(unknownTopic(name));
      continue;
    }
    const start = name === cursor?.topicName ? cursor.partitionIndex : 0;
    const end = Math.min(topic.partitions, start + remaining);
    topics.push(describeTopic(topic, start, end, nodeId));
    if (end < topic.partitions) {
      nextCursor = { topicName: name, partitionIndex: end };
      break;
    }
    remaining -= Math.max(end - start, 0);
  }
  for (const t of topics) t.topicAuthorizedOperations = TOPIC_OPERATIONS;
  return { throttleTimeMs: 0, topics, nextCursor };
};

/** Partitions [start, end) of the topic. */
function describeTopic(t: TopicDescription, start: number, end: number, nodeId: number): Message {
  const partitions: Message[] = [];
  for (let p = start; p < end; p++) {
    partitions.push({
      errorCode: ErrorCode.NONE,
      partitionIndex: p,
      leaderId: nodeId,
      leaderEpoch: LEADER_EPOCH,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      eligibleLeaderReplicas: [],
      lastKnownElr: [],
      offlineReplicas: [],
    });
  }
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: t.name.startsWith('__'),
    partitions,
  };
}

function unknownTopic(name: string): Message {
  let errorCode: number = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  try {
    validateTopicName(name);
  } catch (e) {
    if (!(e instanceof LogError)) throw e;
    errorCode = ErrorCode[e.kafkaError];
  }
  return { errorCode, name, topicId: ZERO_UUID, isInternal: name.startsWith('__'), partitions: [] };
}

function invalidRequest(name: string): Message {
  return {
    errorCode: ErrorCode.INVALID_REQUEST,
    name,
    topicId: ZERO_UUID,
    isInternal: false,
    partitions: [],
  };
}
