/**
 * Which versions of each API the broker advertises in ApiVersions, narrowed from what
 * the codec implements (src/protocol/api-keys.ts) to KAFKA-CLIENTS.md's "advertise"
 * column: the non-flexible versions that kafkajs 2.2.4 and librdkafka 2.0 use, always
 * from version 0 (librdkafka turns features on by checking low versions in range).
 * Keys not listed here advertise every version the codec has. Only keys with a
 * handler are advertised at all; transaction APIs have none on purpose.
 */
import { ApiKey } from '../../protocol/api-keys.ts';

export const ADVERTISED_MAX_VERSION: Readonly<Record<number, number>> = {
  [ApiKey.Produce]: 8,
  [ApiKey.Fetch]: 11,
  [ApiKey.ListOffsets]: 5,
  [ApiKey.Metadata]: 8,
  [ApiKey.OffsetCommit]: 7,
  [ApiKey.OffsetFetch]: 5,
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
  // librdkafka's epoch-bump recovery needs v3+, which also needs flexible versions.
  [ApiKey.InitProducerId]: 1,
  [ApiKey.DescribeConfigs]: 3,
};
