/**
 * Metadata (key 3): the single broker, the cluster id, and the requested topics with
 * their partitions, every one led by this node.
 *
 * Topic selection: null topics (v1+), or an empty array in v0, mean every topic; an
 * empty array in v1+ means none. A requested topic that does not exist is created
 * with num.partitions when auto.create.topics.enable is on and the client allows it
 * (allowAutoTopicCreation, v4+; always allowed before), else UNKNOWN_TOPIC_OR_PARTITION.
 * Internal topics (`__` prefix) are flagged isInternal.
 */

import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';
import type { TopicDescription } from '../log/log-manager.ts';
import { LEADER_EPOCH } from '../log/partition-log.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleMetadata: RequestHandler<BrokerServices> = (body, context, services) => {
  const { logs, nodeId } = services;
  const requested = body.topics as Array<{ name: string | null }> | null;
  const all = requested === null || (context.apiVersion === 0 && requested.length === 0);
  const topics: Message[] = [];
  if (all) {
    for (const t of logs.topics()) topics.push(describeTopic(t, nodeId));
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
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId, host: services.advertisedHost, port: services.port, rack: null }],
    clusterId: services.clusterId,
    controllerId: nodeId,
    topics,
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

function topicError(name: string, errorCode: number): Message {
  return { errorCode, name, isInternal: false, partitions: [] };
}
