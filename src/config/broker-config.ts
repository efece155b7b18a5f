/**
 * Config definitions of the embedded broker: its listener and storage (`broker.*`,
 * ours), the Kafka broker keys it honours (same names and defaults as Kafka), and the
 * `log.*` topic defaults from src/broker/log/topic-config.ts.
 *
 * Used by `connect broker` as they are and by `connect worker` when it embeds the broker.
 */
import { brokerLogDefaultDefs } from '../broker/log/topic-config.ts';
import { type AnyConfigDef, atLeast, between, define, nonEmpty } from './config-def.ts';
import { hostName, parseListener } from './validators.ts';

const group = 'Broker';

/** metrics.listener: one http listener (the broker serves no TLS). */
function metricsListener(v: string): string | undefined {
  if (v === '') return undefined;
  return parseListener(v)?.protocol === 'http'
    ? undefined
    : 'expected http://host:port, e.g. http://127.0.0.1:9404';
}

/** group.consumer.migration.policy: Kafka's values, case-insensitive, all served. */
function migrationPolicy(v: string): string | undefined {
  return ['disabled', 'upgrade', 'downgrade', 'bidirectional'].includes(v.toLowerCase())
    ? undefined
    : 'must be one of disabled, upgrade, downgrade, bidirectional';
}

export const brokerOwnDefs: readonly AnyConfigDef[] = [
  define<string>({
    name: 'broker.host',
    type: 'string',
    default: '127.0.0.1',
    validator: hostName,
    importance: 'high',
    group,
    doc: 'Address the broker listens on; 0.0.0.0 listens on every interface.',
  }),
  define<number>({
    name: 'broker.port',
    type: 'int',
    default: 9092,
    validator: between(0, 65535),
    importance: 'high',
    group,
    doc: 'TCP port of the Kafka protocol listener; 0 picks a free port.',
  }),
  define<string>({
    name: 'broker.advertised.host',
    type: 'string',
    default: null,
    validator: hostName,
    importance: 'high',
    group,
    defaultDoc: 'broker.host, or 127.0.0.1 when that is 0.0.0.0',
    doc: 'Host name clients are told to connect to in Metadata responses.',
  }),
  define<string>({
    name: 'broker.data.dir',
    type: 'string',
    default: './data/broker',
    validator: nonEmpty,
    importance: 'high',
    group,
    doc: 'Directory holding partition logs, consumer offsets and broker metadata.',
  }),
  define<number>({
    name: 'node.id',
    type: 'int',
    default: 1,
    validator: atLeast(0),
    group,
    doc: 'Node id the broker reports in Metadata and FindCoordinator responses.',
  }),
  define<number>({
    name: 'num.partitions',
    type: 'int',
    default: 1,
    validator: atLeast(1),
    group,
    doc: 'Partitions of a topic created automatically or without a partition count.',
  }),
  define<number>({
    name: 'default.replication.factor',
    type: 'int',
    default: 1,
    validator: between(1, 1),
    group,
    doc: 'Replication factor of topics created without one; a single-node broker only has 1.',
  }),
  define<boolean>({
    name: 'auto.create.topics.enable',
    type: 'boolean',
    default: true,
    group,
    doc: 'Create a topic when a client asks Metadata for it or produces to it.',
  }),
  define<boolean>({
    name: 'delete.topic.enable',
    type: 'boolean',
    default: true,
    group,
    doc: 'Allow DeleteTopics; when false the request fails with TOPIC_DELETION_DISABLED.',
  }),
  define<number>({
    name: 'socket.request.max.bytes',
    type: 'int',
    default: 104857600,
    validator: atLeast(1),
    group,
    doc: 'Largest request the broker reads; a larger size prefix closes the connection.',
  }),
  define<number>({
    name: 'connections.max.idle.ms',
    type: 'long',
    default: 600000,
    validator: atLeast(-1),
    group,
    doc: 'Idle connections are closed after this long; -1 never closes them.',
  }),
  define<number>({
    name: 'offsets.retention.minutes',
    type: 'int',
    default: 10080,
    validator: atLeast(1),
    group,
    doc: 'Committed offsets of an empty group are dropped after this many minutes.',
  }),
  define<number>({
    name: 'offsets.retention.check.interval.ms',
    type: 'long',
    default: 600000,
    validator: atLeast(1),
    group,
    doc: 'How often offsets of empty groups are checked for expiry.',
  }),
  define<number>({
    name: 'offsets.topic.num.partitions',
    type: 'int',
    default: 50,
    validator: atLeast(1),
    group,
    doc: 'Partitions of __consumer_offsets (fixed once the topic exists).',
  }),
  define<number>({
    name: 'offsets.topic.segment.bytes',
    type: 'int',
    default: 104857600,
    validator: atLeast(1),
    group,
    doc: 'Segment size of __consumer_offsets, kept small so compaction and loading stay fast.',
  }),
  define<number>({
    name: 'group.min.session.timeout.ms',
    type: 'int',
    default: 6000,
    validator: atLeast(0),
    group,
    doc: 'Smallest session timeout a group member may ask for.',
  }),
  define<number>({
    name: 'group.max.session.timeout.ms',
    type: 'int',
    default: 1800000,
    validator: atLeast(0),
    group,
    doc: 'Largest session timeout a group member may ask for.',
  }),
  define<number>({
    name: 'group.initial.rebalance.delay.ms',
    type: 'int',
    default: 3000,
    validator: atLeast(0),
    group,
    doc: 'How long a new group waits for more members before its first rebalance completes.',
  }),
  define<string>({
    name: 'group.consumer.migration.policy',
    type: 'string',
    // Kafka 4.0's default (group/consumer-group/migration.ts serves every value).
    default: 'bidirectional',
    validator: migrationPolicy,
    group,
    doc: 'Online conversion of groups with members between the classic and consumer (KIP-848) protocols, as Kafka 4.0 does it. upgrade: a ConsumerGroupHeartbeat joining a classic group of protocol type consumer converts it to a consumer group, its members served through JoinGroup/SyncGroup/Heartbeat with server-side assignments; a JoinGroup for a consumer group with members joins it as a classic member. downgrade: classic members may join a consumer group, and when the last member speaking the consumer protocol leaves it, the group converts back to a classic group and rebalances. bidirectional: both. disabled: neither; a ConsumerGroupHeartbeat for a classic group with members answers GROUP_ID_NOT_FOUND, a JoinGroup for a consumer group with members INCONSISTENT_GROUP_PROTOCOL. Values are case-insensitive.',
  }),
  define<number>({
    name: 'transactional.id.expiration.ms',
    type: 'int',
    default: 604800000,
    validator: atLeast(1),
    group,
    doc: 'A transactional id with no transaction for this long is forgotten.',
  }),
  define<number>({
    name: 'transaction.max.timeout.ms',
    type: 'int',
    default: 900000,
    validator: atLeast(1),
    group,
    doc: 'The largest transaction.timeout.ms a producer may ask for (INVALID_TRANSACTION_TIMEOUT above it).',
  }),
  define<number>({
    name: 'transaction.state.log.num.partitions',
    type: 'int',
    default: 50,
    validator: atLeast(1),
    group,
    doc: 'Partitions of __transaction_state, fixed once the topic exists.',
  }),
  define<number>({
    name: 'transaction.state.log.segment.bytes',
    type: 'int',
    default: 104857600,
    validator: atLeast(1),
    group,
    doc: 'Segment size of __transaction_state.',
  }),
  define<number>({
    name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    type: 'int',
    default: 10000,
    validator: atLeast(1),
    group,
    doc: 'How often the coordinator aborts transactions past their timeout (fencing their producer).',
  }),
  define<number>({
    name: 'log.retention.check.interval.ms',
    type: 'long',
    default: 300000,
    validator: atLeast(1),
    group,
    doc: 'How often segments are checked against retention.ms and retention.bytes.',
  }),
  define<boolean>({
    name: 'log.cleaner.enable',
    type: 'boolean',
    default: true,
    group,
    doc: 'Run the log cleaner, which compacts topics with cleanup.policy=compact.',
  }),
  define<number>({
    name: 'log.cleaner.backoff.ms',
    type: 'long',
    default: 15000,
    validator: atLeast(0),
    group,
    doc: 'How long the cleaner sleeps when no log needs cleaning.',
  }),
  define<string>({
    name: 'metrics.listener',
    type: 'string',
    default: null,
    validator: metricsListener,
    importance: 'medium',
    group,
    defaultDoc: 'none (off)',
    doc: 'http://host:port where the broker serves its Prometheus metrics at /metrics (an empty host listens everywhere); a worker running the embedded broker also shows them on its own /metrics.',
  }),
];

/** Every key `connect broker` knows. */
export const brokerConfigDefs: readonly AnyConfigDef[] = [
  ...brokerOwnDefs,
  ...brokerLogDefaultDefs,
];

/** The advertised host: explicit, else the listen host, else loopback for a wildcard bind. */
export function advertisedHost(values: Record<string, unknown>): string {
  const explicit = values['broker.advertised.host'] as string | null;
  if (explicit) return explicit;
  const host = values['broker.host'] as string;
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}
