/**
 * The registry of implemented APIs: key -> schema with its supported version range.
 * It is the single source of what this codebase implements, so the broker answers
 * ApiVersions from `supportedApiVersions()` and never advertises a version the codec
 * cannot read. A broker may advertise a narrower range (see KAFKA-CLIENTS.md,
 * "advertise"); it narrows here, never widens.
 */

import { addOffsetsToTxn } from './messages/add-offsets-to-txn.ts';
import { addPartitionsToTxn } from './messages/add-partitions-to-txn.ts';
import { alterConfigs } from './messages/alter-configs.ts';
import { apiVersions } from './messages/api-versions.ts';
import { consumerGroupDescribe } from './messages/consumer-group-describe.ts';
import { consumerGroupHeartbeat } from './messages/consumer-group-heartbeat.ts';
import { createPartitions } from './messages/create-partitions.ts';
import { createTopics } from './messages/create-topics.ts';
import { deleteGroups } from './messages/delete-groups.ts';
import { deleteRecords } from './messages/delete-records.ts';
import { deleteTopics } from './messages/delete-topics.ts';
import { describeCluster } from './messages/describe-cluster.ts';
import { describeConfigs } from './messages/describe-configs.ts';
import { describeGroups } from './messages/describe-groups.ts';
import { describeLogDirs } from './messages/describe-log-dirs.ts';
import { describeProducers } from './messages/describe-producers.ts';
import { describeTopicPartitions } from './messages/describe-topic-partitions.ts';
import { describeTransactions } from './messages/describe-transactions.ts';
import { endTxn } from './messages/end-txn.ts';
import { fetch } from './messages/fetch.ts';
import { findCoordinator } from './messages/find-coordinator.ts';
import { heartbeat } from './messages/heartbeat.ts';
import { incrementalAlterConfigs } from './messages/incremental-alter-configs.ts';
import { initProducerId } from './messages/init-producer-id.ts';
import { joinGroup } from './messages/join-group.ts';
import { leaveGroup } from './messages/leave-group.ts';
import { listGroups } from './messages/list-groups.ts';
import { listOffsets } from './messages/list-offsets.ts';
import { listTransactions } from './messages/list-transactions.ts';
import { metadata } from './messages/metadata.ts';
import { offsetCommit } from './messages/offset-commit.ts';
import { offsetDelete } from './messages/offset-delete.ts';
import { offsetFetch } from './messages/offset-fetch.ts';
import { offsetForLeaderEpoch } from './messages/offset-for-leader-epoch.ts';
import { produce } from './messages/produce.ts';
import { saslAuthenticate } from './messages/sasl-authenticate.ts';
import { saslHandshake } from './messages/sasl-handshake.ts';
import { syncGroup } from './messages/sync-group.ts';
import { txnOffsetCommit } from './messages/txn-offset-commit.ts';
import type { ApiSchema } from './schema.ts';

/** Kafka's API keys by name, for the ones described here. */
export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  SaslHandshake: 17,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  OffsetForLeaderEpoch: 23,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  TxnOffsetCommit: 28,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  DescribeLogDirs: 35,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  DeleteGroups: 42,
  IncrementalAlterConfigs: 44,
  OffsetDelete: 47,
  DescribeCluster: 60,
  DescribeProducers: 61,
  DescribeTransactions: 65,
  ListTransactions: 66,
  ConsumerGroupHeartbeat: 68,
  ConsumerGroupDescribe: 69,
  DescribeTopicPartitions: 75,
} as const;

export const allSchemas: readonly ApiSchema[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  offsetCommit,
  offsetFetch,
  findCoordinator,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  saslHandshake,
  apiVersions,
  createTopics,
  deleteTopics,
  deleteRecords,
  initProducerId,
  offsetForLeaderEpoch,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  describeConfigs,
  alterConfigs,
  describeLogDirs,
  saslAuthenticate,
  createPartitions,
  deleteGroups,
  incrementalAlterConfigs,
  offsetDelete,
  describeCluster,
  describeProducers,
  describeTransactions,
  listTransactions,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  describeTopicPartitions,
];

// Dense by key (the highest key is small), so lookup on the hot path is an index.
const byKey: (ApiSchema | undefined)[] = [];
for (const s of allSchemas) {
  if (byKey[s.apiKey] !== undefined) throw new Error(`duplicate api key ${s.apiKey}`);
  byKey[s.apiKey] = s;
}

export function schemaFor(apiKey: number): ApiSchema | undefined {
  return byKey[apiKey];
}

export interface ApiVersionRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

/**
 * What the codec implements, as ApiVersions response entries. `limits` narrows a
 * key's range (or removes the key with null): the broker passes what its handlers
 * serve.
 */
export function supportedApiVersions(
  limits: Readonly<Record<number, { min?: number; max?: number } | null>> = {},
): ApiVersionRange[] {
  const out: ApiVersionRange[] = [];
  for (const s of allSchemas) {
    const limit = limits[s.apiKey];
    if (limit === null) continue;
    const minVersion = Math.max(s.minVersion, limit?.min ?? s.minVersion);
    const maxVersion = Math.min(s.maxVersion, limit?.max ?? s.maxVersion);
    if (minVersion <= maxVersion) out.push({ apiKey: s.apiKey, minVersion, maxVersion });
  }
  return out;
}
