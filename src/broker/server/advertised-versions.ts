/**
 * Which versions of each API the broker advertises in ApiVersions, narrowed from what
 * the codec implements (src/protocol/api-keys.ts) to what each handler serves: every
 * field of every advertised version means what Kafka's spec says it means. Always from
 * version 0, below Kafka 4.0's raised minimums (KIP-896): librdkafka turns features on
 * by checking low versions, and kafkajs 2.2 / librdkafka 2.0 use the old versions.
 * Keys not listed here advertise every version the codec has. Only keys with a
 * handler are advertised at all.
 *
 * Flexible versions that only change the encoding (compact forms, tagged fields) are
 * advertised where the handler reads and answers the same fields as the version
 * before: Produce 9, Metadata 9, ListOffsets 6, OffsetCommit 8, JoinGroup 6,
 * Heartbeat 4, LeaveGroup 4, SyncGroup 4, DescribeGroups 5, DeleteTopics 4,
 * DescribeConfigs 4. Versions with new semantics are advertised only where served.
 *
 * Transactions: InitProducerId up to v4 (v3 carries the producer id and epoch for
 * librdkafka's KIP-360 epoch bump, v4 knows PRODUCER_FENCED); AddOffsetsToTxn, EndTxn
 * and TxnOffsetCommit up to v3 and AddPartitionsToTxn up to v4 (its batched form),
 * the last versions before KIP-890's TRANSACTION_ABORTABLE, which those APIs do not
 * answer yet. Produce v11 does (see its row).
 */
import { ApiKey } from '../../protocol/api-keys.ts';

export const ADVERTISED_MAX_VERSION: Readonly<Record<number, number>> = {
  // v10: the current leader and its endpoint with leadership errors (KIP-951); v11:
  // TRANSACTION_ABORTABLE for a partition outside the transaction (handlers/produce.ts).
  [ApiKey.Produce]: 11,
  // v12: last_fetched_epoch and diverging epochs; v13+: topics by id; v15-17 add only
  // what followers send or leader changes answer (handlers/fetch.ts).
  [ApiKey.Fetch]: 17,
  // v7-v9: MAX_TIMESTAMP, EARLIEST_LOCAL and LATEST_TIERED (handlers/list-offsets.ts);
  // v10's timeout bounds remote lookups, of which there are none.
  [ApiKey.ListOffsets]: 10,
  // v10: topic ids in the answer; v12: topics asked by id (handlers/metadata.ts).
  [ApiKey.Metadata]: 12,
  // v9: a consumer group member commits with its member epoch (KIP-848).
  [ApiKey.OffsetCommit]: 9,
  // v7 carries require_stable (UNSTABLE_OFFSET_COMMIT while a transaction holds an
  // offset); v8 batches groups, each answered as v7 answers one; v9 checks a consumer
  // group member's id and epoch (KIP-848, handlers/group/offset-handlers.ts).
  [ApiKey.OffsetFetch]: 9,
  // v4 batches coordinator keys (KIP-699), each answered as v3 answers one.
  [ApiKey.FindCoordinator]: 4,
  // v7 answers the protocol type (KIP-559); v8's reason goes into the rebalance's log
  // line (KIP-800); v9 tells a static leader rejoining unchanged to skip assigning
  // (KIP-814).
  [ApiKey.JoinGroup]: 9,
  [ApiKey.Heartbeat]: 4,
  // v5: each member's reason, logged (KIP-800).
  [ApiKey.LeaveGroup]: 5,
  // v5 checks the protocol type and name against the group's (KIP-559).
  [ApiKey.SyncGroup]: 5,
  [ApiKey.DescribeGroups]: 5,
  // v4 filters by state, v5 by type. librdkafka 2.0 picks v4 and repeats the request's
  // tag section, which the schema tolerates (messages/list-groups.ts).
  [ApiKey.ListGroups]: 5,
  [ApiKey.SaslHandshake]: 1,
  // Every version, answered in the version asked (handlers/api-versions.ts); a newer
  // one gets the v0-format UNSUPPORTED_VERSION refusal (KIP-511), see the router.
  [ApiKey.ApiVersions]: 4,
  // v5: the created topic's configs in the answer (KIP-525); v6 only adds a quota
  // error no single node raises; v7: its topic id.
  [ApiKey.CreateTopics]: 7,
  // v5 answers an error message per topic; v6 takes topics by name or id.
  [ApiKey.DeleteTopics]: 6,
  [ApiKey.InitProducerId]: 4,
  [ApiKey.AddPartitionsToTxn]: 4,
  [ApiKey.AddOffsetsToTxn]: 3,
  [ApiKey.EndTxn]: 3,
  [ApiKey.TxnOffsetCommit]: 3,
  // KIP-664 admin APIs: every version the codec has (all flexible).
  [ApiKey.DescribeProducers]: 0,
  [ApiKey.DescribeTransactions]: 0,
  [ApiKey.ListTransactions]: 1,
  [ApiKey.DescribeConfigs]: 4,
  // Every version Kafka defines, each served in full (see each handler's header).
  // v1: the endpoint type, answered as a broker listener does.
  [ApiKey.DescribeCluster]: 1,
  // v2+: current_leader_epoch fenced; v3+: replica_id, answered alike for all.
  [ApiKey.OffsetForLeaderEpoch]: 4,
  // v4: the volume's total and usable bytes (statfs).
  [ApiKey.DescribeLogDirs]: 4,
  // KIP-966: paged by the cursor as Kafka pages it.
  [ApiKey.DescribeTopicPartitions]: 0,
  // KIP-848: v1 adds the topic regex subscription (group/consumer-group/).
  [ApiKey.ConsumerGroupHeartbeat]: 1,
  [ApiKey.ConsumerGroupDescribe]: 0,
};
