/**
 * Metadata (key 3): the single broker, the cluster id, and the requested topics with
 * their partitions, every one led by this node.
 *
 * Topic selection: null topics (v1+), or an empty array in v0, mean every topic; an
 * empty array in v1+ means none. A requested topic that does not exist is created
 * with num.partitions when auto.create.topics.enable is on and the client allows it
 * (allowAutoTopicCreation, v4+; always allowed before), else UNKNOWN_TOPIC_OR_PARTITION.
 * Internal topics (`__` prefix) are flagged isInternal.
 *
 * Topic ids: answered from v10. v12 looks topics up by id (an entry with a non-zero
 * id; its name is ignored, as Kafka does), UNKNOWN_TOPIC_ID for an id no topic has,
 * never auto-creating; v10 and v11 refuse an entry with an id or without a name
 * (INVALID_REQUEST), as Kafka's KafkaApis does.
 *
 * Authorized operations (v8+), when the client asks: every operation Kafka defines for
 * a topic (and, v8-10, for the cluster), since there are no ACLs; otherwise Kafka's
 * "not asked" sentinel.
 */

import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { AUTHORIZED_OPERATIONS_OMITTED, ZERO_UUID } from '../../protocol/sentinels.ts';
import { LogError } from '../log/errors.ts';
import type { TopicDescription } from '../log/log-manager.ts';
import { LEADER_EPOCH } from '../log/partition-log.ts';
import { CLUSTER_OPERATIONS, TOPIC_OPERATIONS } from './authorized-operations.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleMetadata: RequestHandler<BrokerServices> = (body, context, services) => {
  const { logs, nodeId } = services;
  const v = context.apiVersion;
  const requested = body.topics as Array<{ name: string | null; topicId?: string }> | null;
  const all = requested === null || (v === 0 && requested.length === 0);
  const topicOps =
    body.includeTopicAuthorizedOperations === true
      ? TOPIC_OPERATIONS
      : AUTHORIZED_OPERATIONS_OMITTED;
  const topics: Message[] = [];
  const byId = !all && requested.some((t) => t.topicId !== undefined && t.topicId !== ZERO_UUID);
  if (all) {
    for (const t of logs.topics()) topics.push(describeTopic(t, nodeId));
  } else if (v < 12 && (byId || requested.some((t) => t.name === null))) {
    for (const t of requested)
      topics.push({
        ...topicError(t.name, ErrorCode.INVALID_REQUEST),
        topicId: t.topicId ?? ZERO_UUID,
      });
  } else if (byId) {
    const seen = new Set<string>();
    for (const { topicId } of requested) {
      if (topicId === undefined || topicId === ZERO_UUID || seen.has(topicId)) continue;
      seen.add(topicId);
      const topic = logs.topicById(topicId);
      topics.push(
        topic === undefined
          ? { ...topicError(null, ErrorCode.UNKNOWN_TOPIC_ID), topicId }
          : describeTopic(topic, nodeId),
      );
    }
  } else {
    const autoCreate =
      services.config['auto.create.topics.enable'] === true &&
      body.allowAutoTopicCreation !== false;
    const seen = new Set<string>();
    for (const { name } of requested) {
      if (name === null || seen.has(name)) continue;
      seen.add(name);
      let topic = logs.topic(name);
      if (topic === undefined && autoCreate) {
        try {
          topic = logs.createTopic(name, services.config['num.partitions'] as number);
          services.logger.info({ topic: name, partitions: topic.partitions }, 'auto-created topic');
        } catch (e) {
          if (!(e instanceof LogError)) throw e;
          topics.push(topicError(name, ErrorCode[e.kafkaError]));
          continue;
        }
      }
      topics.push(
        topic === undefined
          ? topicError(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
          : describeTopic(topic, nodeId),
      );
    }
  }
  for (const t of topics) if (t.errorCode === 0) t.topicAuthorizedOperations = topicOps;
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId, host: services.advertisedHost, port: services.port, rack: null }],
    clusterId: services.clusterId,
    controllerId: nodeId,
    topics,
    clusterAuthorizedOperations:
      body.includeClusterAuthorizedOperations === true
        ? CLUSTER_OPERATIONS
        : AUTHORIZED_OPERATIONS_OMITTED,
  };
};

function describeTopic(t: TopicDescription, nodeId: number): Message {
  const partitions: Message[] = [];
  for (let p = 0; p < t.partitions; p++) {
    partitions.push({
      errorCode: 0,
      partitionIndex: p,
      leaderId: nodeId,
      leaderEpoch: LEADER_EPOCH,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      offlineReplicas: [],
    });
  }
  return {
    errorCode: 0,
    name: t.name,
    topicId: t.topicId,
    isInternal: t.name.startsWith('__'),
    partitions,
  };
}

function topicError(name: string | null, errorCode: number): Message {
  return { errorCode, name, isInternal: false, partitions: [] };
}
