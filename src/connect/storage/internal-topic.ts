/**
 * Creation and checking of the worker's internal topics (config, offsets, status):
 * they must be compacted, or a retention run would silently delete connector configs
 * and offsets. A missing topic is created with the required partition count and
 * `cleanup.policy=compact`; an existing one with another policy (or a config topic
 * with more than one partition) is refused with an error that says how to fix it,
 * as Kafka Connect does.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import { KafkaResponseError } from '../../protocol/client/cluster-client.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { KafkaBasedLog, type KafkaBasedLogOptions } from './kafka-based-log.ts';

export interface InternalTopicSpec {
  topic: string;
  /** The worker key that names it, for error messages (e.g. config.storage.topic). */
  configKey: string;
  partitions: number;
  /** -1: the broker's default. */
  replicationFactor: number;
  /** The config topic must have exactly one partition to keep configs in order. */
  exactlyOnePartition?: boolean;
}

export class InternalTopicError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InternalTopicError';
  }
}

const TOPIC_RESOURCE = 2;

/** Creates the topic if missing; verifies partitions and cleanup policy. Returns its partition count. */
export async function ensureInternalTopic(
  client: ClusterClient,
  spec: InternalTopicSpec,
): Promise<number> {
  const conn = await client.anyConnection();
  const created = await conn.request(ApiKey.CreateTopics, {
    topics: [
      {
        name: spec.topic,
        numPartitions: spec.partitions,
        replicationFactor: spec.replicationFactor,
        assignments: [],
        configs: [{ name: 'cleanup.policy', value: 'compact' }],
      },
    ],
    timeoutMs: 30_000,
    validateOnly: false,
  });
  const result = (created.topics as Message[])[0]!;
  if (result.errorCode !== 0 && result.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) {
    throw new KafkaResponseError(
      result.errorCode,
      `creating internal topic ${spec.topic} (${spec.configKey})`,
      result.errorMessage,
    );
  }
  const [meta] = await client.metadata([spec.topic]);
  if (!meta || meta.errorCode !== 0) {
    throw new InternalTopicError(
      `internal topic ${spec.topic} (${spec.configKey}) is not available`,
    );
  }
  const partitions = meta.partitions.length;
  if (spec.exactlyOnePartition && partitions !== 1) {
    throw new InternalTopicError(
      `Topic '${spec.topic}' supplied via the '${spec.configKey}' property is required to have a single partition in order to guarantee consistency of connector configurations, but found ${partitions} partitions.`,
    );
  }
  const described = await conn.request(ApiKey.DescribeConfigs, {
    resources: [
      {
        resourceType: TOPIC_RESOURCE,
        resourceName: spec.topic,
        configurationKeys: ['cleanup.policy'],
      },
    ],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const res = (described.results as Message[])[0]!;
  if (res.errorCode !== 0)
    throw new KafkaResponseError(res.errorCode, `describing ${spec.topic}`, res.errorMessage);
  const policy = ((res.configs as Message[]).find((c) => c.name === 'cleanup.policy')?.value ??
    'delete') as string;
  const policies = policy.split(',').map((p) => p.trim());
  if (!policies.includes('compact') || policies.includes('delete')) {
    throw new InternalTopicError(
      `Topic '${spec.topic}' supplied via the '${spec.configKey}' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of connector state, but found the topic currently has 'cleanup.policy=${policy}'. Continuing would likely result in eventually losing state and problems restarting this Connect cluster in the future. Change the '${spec.configKey}' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'.`,
    );
  }
  return partitions;
}

/**
 * Ensures the internal topic, then starts reading it from the beginning: what every
 * Kafka-based backing store does in its start().
 */
export async function startInternalLog(
  client: ClusterClient,
  spec: InternalTopicSpec,
  log: Omit<KafkaBasedLogOptions, 'client' | 'topic' | 'partitions'>,
): Promise<KafkaBasedLog> {
  const partitions = await ensureInternalTopic(client, spec);
  const started = new KafkaBasedLog({ ...log, client, topic: spec.topic, partitions });
  await started.start();
  return started;
}
