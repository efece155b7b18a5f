/**
 * ApiVersions (key 18): what the broker answers, version by version.
 *
 * - v0-v4 are answered in the version asked. v3+ (flexible) carry, as tagged fields,
 *   the KIP-584 features a single-node KRaft broker reports: `metadata.version`,
 *   supported and finalized at one level (METADATA_VERSION below), and `group.version`
 *   1 (GROUP_VERSION below: the consumer group protocol of KIP-848 is served,
 *   group/consumer-group/). Features the broker does not implement
 *   (transaction.version for KIP-890, kraft.version, eligible.leader.replicas.version)
 *   are not listed, so clients that gate on them (Java 4.x producers on
 *   transaction.version) stay at level 0, which is what the broker serves.
 *   zkMigrationReady is false: there is no ZooKeeper.
 * - Below v4 a supported feature whose minimum level is 0 is omitted, as Kafka does
 *   (KAFKA-17492): clients before KAFKA-17011 reject such a range while parsing.
 * - v3+ requests name the client software (KIP-511). Kafka refuses a name or version
 *   outside `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?` with INVALID_REQUEST; this
 *   broker does not, yet: this repository's own client (src/protocol/client/
 *   broker-connection.ts) sends empty names at ApiVersions v3+, and refusing them
 *   would stop every worker from connecting. The names are only ever logged, so
 *   answering is harmless; the refusal belongs here once that client names itself.
 * - A version the codec does not know never gets here: the router answers it with the
 *   v0-format UNSUPPORTED_VERSION reply (KIP-511, request-router.ts).
 *
 * Pure: the router passes the advertised ranges; no state, callable from anywhere.
 */
import type { ApiVersionRange } from '../../protocol/api-keys.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';

/**
 * metadata.version 3.3-IV3 (feature level 7): the lowest level a Kafka 4.0 node
 * supports, and the newest that gates nothing this broker lacks; later levels turn on
 * metadata the broker has no use for or features it does not serve (ZooKeeper
 * migration, tiered storage, SCRAM records, ELR, KIP-890's transaction markers).
 */
export const METADATA_VERSION = { name: 'metadata.version', level: 7 } as const;

/** group.version 1: ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848) are served. */
export const GROUP_VERSION = { name: 'group.version', level: 1 } as const;

/**
 * The finalized-features epoch. A KRaft broker reports the metadata offset at which
 * features were last finalized; this broker's features are fixed at start-up, before
 * any record, so the epoch is 0 (-1 would mean "not known").
 */
export const FINALIZED_FEATURES_EPOCH = 0n;

export interface SupportedFeature {
  name: string;
  minVersion: number;
  maxVersion: number;
}

export interface FinalizedFeature {
  name: string;
  minVersionLevel: number;
  maxVersionLevel: number;
}

export const SUPPORTED_FEATURES: readonly SupportedFeature[] = [
  {
    name: METADATA_VERSION.name,
    minVersion: METADATA_VERSION.level,
    maxVersion: METADATA_VERSION.level,
  },
  // Level 0 (classic groups only) stays supported, as in Kafka.
  { name: GROUP_VERSION.name, minVersion: 0, maxVersion: GROUP_VERSION.level },
];

export const FINALIZED_FEATURES: readonly FinalizedFeature[] = [
  {
    name: METADATA_VERSION.name,
    minVersionLevel: METADATA_VERSION.level,
    maxVersionLevel: METADATA_VERSION.level,
  },
  {
    name: GROUP_VERSION.name,
    minVersionLevel: GROUP_VERSION.level,
    maxVersionLevel: GROUP_VERSION.level,
  },
];

/** The first version that lets a supported feature's minimum be 0 (KAFKA-17011). */
const FEATURE_MIN_ZERO_FROM = 4;

export interface BrokerFeatures {
  supported: readonly SupportedFeature[];
  finalized: readonly FinalizedFeature[];
  finalizedEpoch: bigint;
}

export const BROKER_FEATURES: BrokerFeatures = {
  supported: SUPPORTED_FEATURES,
  finalized: FINALIZED_FEATURES,
  finalizedEpoch: FINALIZED_FEATURES_EPOCH,
};

/** The ApiVersions response body for `version`, listing `advertised`. */
export function apiVersionsAnswer(
  version: number,
  advertised: readonly ApiVersionRange[],
  features: BrokerFeatures = BROKER_FEATURES,
): Message {
  return {
    errorCode: ErrorCode.NONE,
    apiKeys: advertised.map((r) => ({ ...r })),
    throttleTimeMs: 0,
    supportedFeatures: features.supported
      .filter((f) => version >= FEATURE_MIN_ZERO_FROM || f.minVersion !== 0)
      .map((f) => ({ ...f })),
    finalizedFeaturesEpoch: features.finalizedEpoch,
    finalizedFeatures: features.finalized.map((f) => ({ ...f })),
    zkMigrationReady: false,
  };
}

/** KIP-511's refusal body, sent in the v0 layout for a version the codec does not know. */
export function apiVersionsRefusal(advertised: readonly ApiVersionRange[]): Message {
  return {
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    apiKeys: advertised.map((r) => ({ ...r })),
    throttleTimeMs: 0,
  };
}
