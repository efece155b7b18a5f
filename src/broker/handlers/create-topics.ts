/**
 * CreateTopics (key 19): partition count (-1 = num.partitions), configs validated by
 * the log manager, validateOnly. A single node cannot hold more than one replica:
 * replication factor above 1 is INVALID_REPLICATION_FACTOR, and a manual assignment
 * must place every partition on this node alone. Errors are per topic with a
 * message; a name given twice in one request is INVALID_REQUEST for that name.
 * v5+ answers the created topic's partitions, replication factor and every config
 * with its value and source, as DescribeConfigs lists them (KIP-525), validateOnly
 * included; v7 its topic id.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import { configText, effectiveTopicConfigs } from './describe-configs.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

const DEFAULT = -1;

export const handleCreateTopics: RequestHandler<BrokerServices> = (body, _context, services) => {
  const counts = new Map<string, number>();
  for (const t of body.topics as Message[]) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const topics = (body.topics as Message[]).map((t) => {
    const answer = {
      name: t.name as string,
      topicId: undefined as string | undefined,
      errorCode: 0,
      errorMessage: null as string | null,
      numPartitions: -1,
      replicationFactor: -1,
      configs: [] as Message[],
    };
    const fail = (errorCode: number, errorMessage: string) => {
      answer.errorCode = errorCode;
      answer.errorMessage = errorMessage;
      return answer;
    };
    if (counts.get(t.name)! > 1) {
      return fail(
        ErrorCode.INVALID_REQUEST,
        `Create topics request from client has duplicate topic ${t.name}.`,
      );
    }
    const assignments = t.assignments as Array<{ partitionIndex: number; brokerIds: number[] }>;
    let partitions = t.numPartitions as number;
    let replicationFactor = t.replicationFactor as number;
    if (assignments.length > 0) {
      if (partitions !== DEFAULT || replicationFactor !== DEFAULT) {
        return fail(
          ErrorCode.INVALID_REQUEST,
          'Both numPartitions or replicationFactor and replicasAssignments were set.',
        );
      }
      const ok = assignments.every(
        (a, i) =>
          a.partitionIndex === i && a.brokerIds.length === 1 && a.brokerIds[0] === services.nodeId,
      );
      if (!ok) {
        return fail(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Every partition must be assigned to broker ${services.nodeId} alone, partitions numbered from 0.`,
        );
      }
      partitions = assignments.length;
      replicationFactor = 1;
    }
    if (partitions === DEFAULT) partitions = services.config['num.partitions'] as number;
    if (replicationFactor === DEFAULT)
      replicationFactor = services.config['default.replication.factor'] as number;
    if (replicationFactor !== 1) {
      return fail(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        `Replication factor: ${replicationFactor} larger than available brokers: 1.`,
      );
    }
    const configs: Record<string, string> = {};
    for (const c of t.configs as Array<{ name: string; value: string | null }>) {
      if (c.value !== null) configs[c.name] = c.value;
    }
    try {
      const created = services.logs.createTopic(t.name, partitions, configs, {
        validateOnly: body.validateOnly === true,
      });
      answer.topicId = created.topicId;
      answer.numPartitions = created.partitions;
      answer.replicationFactor = 1;
      // The stored overrides (as validated), or the request's for validateOnly.
      const overrides = services.logs.topic(t.name)?.configs ?? configs;
      answer.configs = effectiveTopicConfigs(overrides, services.config).map((c) => ({
        name: c.def.name,
        value: c.def.type === 'password' ? null : configText(c.value),
        readOnly: false,
        configSource: c.source,
        isSensitive: c.def.type === 'password',
      }));
      if (body.validateOnly !== true) {
        services.logger.info({ topic: t.name, partitions, configs }, 'created topic');
      }
    } catch (e) {
      const { errorCode, errorMessage } = toErrorAnswer(e);
      return fail(errorCode, errorMessage);
    }
    return answer;
  });
  return { throttleTimeMs: 0, topics };
};
