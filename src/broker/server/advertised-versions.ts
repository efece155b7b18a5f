/**
 * Which versions of each API the broker advertises in ApiVersions, narrowed from what
 * the codec implements (src/protocol/api-keys.ts) to KAFKA-CLIENTS.md's "advertise"
 * column: the non-flexible versions that kafkajs 2.2.4 and librdkafka 2.0 use, always
 * from version 0 (librdkafka turns features on by checking low versions in range).
 * Keys not listed here advertise every version the codec has. Only keys with a
 * handler are advertised at all.
 *
 * Transactions: InitProducerId up to v4 (v3 carries the producer id and epoch for
 * librdkafka's KIP-360 epoch bump, v4 knows PRODUCER_FENCED); AddOffsetsToTxn, EndTxn
 * and TxnOffsetCommit up to v3 and AddPartitionsToTxn up to v4 (its batched form),
 * the last versions before KIP-890's TRANSACTION_ABORTABLE, which is not served.
 */
import { ApiKey } from '../../protocol/api-keys.ts';

export const ADVERTISED_MAX_VERSION: Readonly<Record<number, number>> = {
  [ApiKey.Produce]: 8,
  [ApiKey.Fetch]: 11,
  [ApiKey.ListOffsets]: 5,
  [ApiKey.Metadata]: 8,
  [ApiKey.OffsetCommit]: 7,
  // v7 carries require_stable (UNSTABLE_OFFSET_COMMIT while a transaction holds an offset).
  [ApiKey.OffsetFetch]: 7,
  [ApiKey.FindCoordinator]: 2,
  [ApiKey.JoinGroup]: 5,
  [ApiKey.Heartbeat]: 3,
  [ApiKey.LeaveGroup]: 3,
  [ApiKey.SyncGroup]: 3,
  [ApiKey.DescribeGroups]: 4,
  [ApiKey.ListGroups]: 2,
  [ApiKey.SaslHandshake]: 1,
  // v3 requests get the v0-format UNSUPPORTED_VERSION refusal (KIP-511), see the router.
  [ApiKey.ApiVersions]: 2,
  [ApiKey.CreateTopics]: 4,
  [ApiKey.DeleteTopics]: 3,
  [ApiKey.InitProducerId]: 4,
  [ApiKey.AddPartitionsToTxn]: 4,
  [ApiKey.AddOffsetsToTxn]: 3,
  [ApiKey.EndTxn]: 3,
  [ApiKey.TxnOffsetCommit]: 3,
  // KIP-664 admin APIs: every version the codec has (all flexible).
  [ApiKey.DescribeProducers]: 0,
  [ApiKey.DescribeTransactions]: 0,
  [ApiKey.ListTransactions]: 1,
  [ApiKey.DescribeConfigs]: 3,
};
