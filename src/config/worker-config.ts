/**
 * Config definitions of a Connect worker: Kafka Connect's own worker keys with Kafka's
 * names and defaults (so existing connect-distributed.properties files work), plus
 * ours for the embedded broker (`broker.embedded` and every key of broker-config.ts).
 *
 * Where we depart from Kafka's default it is said in the key's doc: keys Kafka
 * requires (group.id, the storage topics, the converters) default to the values of
 * Kafka's sample connect-distributed.properties so that `connect worker` runs with no
 * file at all, and replication factors default to -1 (the broker's default) so one
 * set of defaults fits the single-node embedded broker and a real cluster.
 */
import { fileURLToPath } from 'node:url';
import { brokerConfigDefs } from './broker-config.ts';
import { type AnyConfigDef, atLeast, define, nonEmpty, oneOf } from './config-def.ts';
import { loggingDefs } from './logging-config.ts';
import {
  hostName,
  hostPortList,
  listenerList,
  partitionCount,
  replicationFactor,
} from './validators.ts';

/** The repository's connectors/ folder, where our own plugins live. */
export const bundledPluginPath = fileURLToPath(new URL('../../connectors', import.meta.url));

const JSON_CONVERTER = 'org.apache.kafka.connect.json.JsonConverter';

const cluster = 'Cluster';
const topics = 'Internal topics';
const converters = 'Converters';
const offsets = 'Offsets';
const rest = 'REST API';
const membership = 'Group membership';
const tasks = 'Tasks and plugins';
const embedded = 'Embedded broker';

const commonDefs: AnyConfigDef[] = [
  define<string[]>({
    name: 'bootstrap.servers',
    type: 'list',
    default: [],
    validator: hostPortList,
    importance: 'high',
    group: cluster,
    defaultDoc: 'empty: start the embedded broker and use it',
    doc: 'host:port list of the Kafka cluster; empty starts the embedded broker in this process.',
  }),
  define<boolean>({
    name: 'broker.embedded',
    type: 'boolean',
    default: null,
    importance: 'high',
    group: embedded,
    defaultDoc: 'true when bootstrap.servers is empty',
    doc: 'Run the embedded broker in this process (on broker.host:broker.port).',
  }),
  define<string>({
    name: 'client.id',
    type: 'string',
    default: '',
    group: cluster,
    doc: "Client id the worker's Kafka clients send, shown in broker logs and quotas.",
  }),
  define<string>({
    name: 'security.protocol',
    type: 'string',
    default: 'PLAINTEXT',
    validator: (v) =>
      v === 'PLAINTEXT'
        ? undefined
        : ['SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(v)
          ? `not supported: security.protocol=${v}; the worker's Kafka clients connect in PLAINTEXT only (TLS and SASL are not implemented)`
          : 'must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL',
    group: cluster,
    doc: 'Protocol used to talk to the brokers. Only PLAINTEXT is implemented: SSL, SASL_PLAINTEXT and SASL_SSL are refused, as are the ssl.* and sasl.* keys that would configure them.',
  }),
  define<number>({
    name: 'request.timeout.ms',
    type: 'int',
    default: 40000,
    validator: atLeast(0),
    group: cluster,
    doc: 'How long the worker waits for a broker response before retrying or failing.',
  }),
  define<number>({
    name: 'retry.backoff.ms',
    type: 'long',
    default: 100,
    validator: atLeast(0),
    group: cluster,
    doc: 'Pause before retrying a failed request to the brokers.',
  }),
  define<number>({
    name: 'metadata.max.age.ms',
    type: 'long',
    default: 300000,
    validator: atLeast(0),
    group: cluster,
    doc: 'Metadata is refreshed at least this often, to see new partitions and leaders.',
  }),
  define<string>({
    name: 'key.converter',
    type: 'class',
    default: JSON_CONVERTER,
    validator: nonEmpty,
    importance: 'high',
    group: converters,
    doc: 'Converter between record keys and bytes in Kafka (key.converter.* configures it).',
  }),
  define<string>({
    name: 'value.converter',
    type: 'class',
    default: JSON_CONVERTER,
    validator: nonEmpty,
    importance: 'high',
    group: converters,
    doc: 'Converter between record values and bytes in Kafka (value.converter.* configures it).',
  }),
  define<boolean>({
    name: 'key.converter.schemas.enable',
    type: 'boolean',
    default: true,
    group: converters,
    doc: 'JsonConverter: wrap keys in a {"schema","payload"} envelope.',
  }),
  define<boolean>({
    name: 'value.converter.schemas.enable',
    type: 'boolean',
    default: true,
    group: converters,
    doc: 'JsonConverter: wrap values in a {"schema","payload"} envelope.',
  }),
  define<string>({
    name: 'header.converter',
    type: 'class',
    default: 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
    validator: nonEmpty,
    group: converters,
    doc: 'Converter between record header values and bytes.',
  }),
  define<number>({
    name: 'offset.flush.interval.ms',
    type: 'long',
    default: 60000,
    validator: atLeast(1),
    group: offsets,
    doc: 'How often source task offsets are committed.',
  }),
  define<number>({
    name: 'offset.flush.timeout.ms',
    type: 'long',
    default: 5000,
    validator: atLeast(0),
    group: offsets,
    doc: 'How long an offset commit waits for outstanding records before it is cancelled.',
  }),
  define<string[]>({
    name: 'listeners',
    type: 'list',
    default: null,
    validator: listenerList,
    importance: 'high',
    group: rest,
    defaultDoc: 'http://:8083 (or rest.host.name and rest.port when set)',
    doc: 'REST API listeners as protocol://host:port; an empty host listens everywhere.',
  }),
  define<number>({
    name: 'rest.port',
    type: 'int',
    default: 8083,
    validator: atLeast(0),
    group: rest,
    doc: 'Deprecated (use listeners): REST port, used when listeners is not set.',
  }),
  define<string>({
    name: 'rest.host.name',
    type: 'string',
    default: null,
    validator: hostName,
    group: rest,
    doc: 'Deprecated (use listeners): REST host, used when listeners is not set.',
  }),
  define<string>({
    name: 'rest.advertised.host.name',
    type: 'string',
    default: null,
    validator: hostName,
    group: rest,
    defaultDoc: 'the listener host, else the machine host name',
    doc: 'Host other workers use to reach this worker (request forwarding to the leader).',
  }),
  define<number>({
    name: 'rest.advertised.port',
    type: 'int',
    default: null,
    validator: atLeast(0),
    group: rest,
    defaultDoc: 'the listener port',
    doc: 'Port other workers use to reach this worker.',
  }),
  define<string>({
    name: 'rest.advertised.listener',
    type: 'string',
    default: null,
    validator: oneOf('http', 'https'),
    group: rest,
    defaultDoc: 'the first listener',
    doc: 'Which listener (http or https) is advertised to other workers.',
  }),
  define<string>({
    name: 'access.control.allow.origin',
    type: 'string',
    default: '',
    group: rest,
    doc: 'Browser origins allowed by CORS (comma list, * for any); empty disables CORS.',
  }),
  define<string>({
    name: 'access.control.allow.methods',
    type: 'string',
    default: '',
    group: rest,
    defaultDoc: 'empty: GET,POST,HEAD',
    doc: 'Methods CORS allows when access.control.allow.origin is set (comma list).',
  }),
  define<string[]>({
    name: 'rest.extension.classes',
    type: 'list',
    default: [],
    group: rest,
    doc: 'REST extensions: org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension turns on Basic authentication (the JAAS file of java.security.auth.login.config); any other class is refused at start.',
  }),
  define<string>({
    name: 'java.security.auth.login.config',
    type: 'string',
    default: null,
    group: rest,
    defaultDoc: '-Djava.security.auth.login.config=... in KAFKA_OPTS, as a JVM reads it',
    doc: 'JAAS file whose KafkaConnect entry (PropertyFileLoginModule, file="<user=password file>") BasicAuthSecurityRestExtension checks requests against.',
  }),
  define<string[]>({
    name: 'plugin.path',
    type: 'list',
    default: [bundledPluginPath],
    importance: 'high',
    group: tasks,
    defaultDoc: "the repository's connectors/ folder",
    doc: 'Folders searched for connector, converter and transform plugins (one subfolder each).',
  }),
  // Kafka Connect's key and default. A connector's stop (and deleted hook) gets the
  // same bound: Kafka Connect gives connectors a fixed 5 s, the same as this default.
  define<number>({
    name: 'task.shutdown.graceful.timeout.ms',
    type: 'long',
    default: 5000,
    validator: atLeast(0),
    group: tasks,
    doc: 'How long a task or connector may take to stop (or to clean up when deleted) before it is abandoned.',
  }),
  // Not a Kafka Connect key: there a task starts on a thread of its own and a hung
  // start stalls only that thread. Here it would hold the task forever without a
  // deadline. 60 s covers a start that connects to a remote system and creates a
  // replication slot behind an ordinary transaction; longer than that is taken as hung.
  define<number>({
    name: 'task.start.timeout.ms',
    type: 'long',
    default: 60_000,
    validator: atLeast(1),
    group: tasks,
    doc: 'How long a task may take to start; then it is FAILED and its start abandoned.',
  }),
  // The same for a connector's start (and its taskConfigs), for the same reason.
  define<number>({
    name: 'connector.start.timeout.ms',
    type: 'long',
    default: 60_000,
    validator: atLeast(1),
    group: tasks,
    doc: 'How long a connector may take to start or to generate task configs; then it is FAILED.',
  }),
  define<string>({
    name: 'connector.client.config.override.policy',
    type: 'string',
    default: 'All',
    validator: oneOf('All', 'None', 'Principal'),
    group: tasks,
    doc: "Which producer.override.* / consumer.override.* / admin.override.* keys connectors may set: All (each still checked against what the clients implement), None (none; Kafka's message names the key) or Principal (only the SASL keys, which the PLAINTEXT-only clients refuse).",
  }),
  define<boolean>({
    name: 'topic.creation.enable',
    type: 'boolean',
    default: true,
    group: tasks,
    doc: 'Let source connectors create their topics with topic.creation.* settings.',
  }),
  define<string[]>({
    name: 'config.providers',
    type: 'list',
    default: [],
    group: tasks,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Kafka's placeholder syntax, shown literally
    doc: 'Names of config providers that resolve ${provider:path:key} in connector configs.',
  }),
];

const distributedOnlyDefs: AnyConfigDef[] = [
  define<string>({
    name: 'group.id',
    type: 'string',
    default: 'connect-cluster',
    validator: nonEmpty,
    importance: 'high',
    group: cluster,
    doc: 'Workers with the same group.id form one Connect cluster (Kafka requires it; default from its sample file).',
  }),
  define<string>({
    name: 'config.storage.topic',
    type: 'string',
    default: 'connect-configs',
    validator: nonEmpty,
    importance: 'high',
    group: topics,
    doc: 'Compacted one-partition topic holding connector and task configs.',
  }),
  define<number>({
    name: 'config.storage.replication.factor',
    type: 'int',
    default: -1,
    validator: replicationFactor,
    group: topics,
    doc: 'Replication factor of config.storage.topic when the worker creates it (Kafka: 3).',
  }),
  define<string>({
    name: 'offset.storage.topic',
    type: 'string',
    default: 'connect-offsets',
    validator: nonEmpty,
    importance: 'high',
    group: topics,
    doc: 'Compacted topic holding source connector offsets.',
  }),
  define<number>({
    name: 'offset.storage.replication.factor',
    type: 'int',
    default: -1,
    validator: replicationFactor,
    group: topics,
    doc: 'Replication factor of offset.storage.topic when the worker creates it (Kafka: 3).',
  }),
  define<number>({
    name: 'offset.storage.partitions',
    type: 'int',
    default: 25,
    validator: partitionCount,
    group: topics,
    doc: 'Partitions of offset.storage.topic when the worker creates it.',
  }),
  define<string>({
    name: 'status.storage.topic',
    type: 'string',
    default: 'connect-status',
    validator: nonEmpty,
    importance: 'high',
    group: topics,
    doc: 'Compacted topic holding connector and task states.',
  }),
  define<number>({
    name: 'status.storage.replication.factor',
    type: 'int',
    default: -1,
    validator: replicationFactor,
    group: topics,
    doc: 'Replication factor of status.storage.topic when the worker creates it (Kafka: 3).',
  }),
  define<number>({
    name: 'status.storage.partitions',
    type: 'int',
    default: 5,
    validator: partitionCount,
    group: topics,
    doc: 'Partitions of status.storage.topic when the worker creates it.',
  }),
  define<number>({
    name: 'session.timeout.ms',
    type: 'int',
    default: 10000,
    validator: atLeast(1),
    group: membership,
    doc: 'A worker missing heartbeats for this long leaves the group and its work moves.',
  }),
  define<number>({
    name: 'heartbeat.interval.ms',
    type: 'int',
    default: 3000,
    validator: atLeast(1),
    group: membership,
    doc: 'How often a worker heartbeats to the group coordinator.',
  }),
  define<number>({
    name: 'rebalance.timeout.ms',
    type: 'int',
    default: 60000,
    validator: atLeast(1),
    group: membership,
    doc: 'How long members have to rejoin during a rebalance.',
  }),
  define<number>({
    name: 'scheduled.rebalance.max.delay.ms',
    type: 'int',
    // Kafka's 300 s suits rolling restarts of large clusters; a worker here restarts in
    // seconds, and 30 s bounds how long a crashed worker's tasks stay down. Work a worker
    // gives up cleanly (shutdown, revocation) moves at once regardless.
    default: 30000,
    validator: atLeast(0),
    group: membership,
    doc: "How long a vanished worker's connectors and tasks wait for it to come back before moving (Kafka: 300000; work given up cleanly moves at once).",
  }),
  define<string>({
    name: 'connect.protocol',
    type: 'string',
    // sessioned promises Java workers a session key (KIP-507) on the config topic, which
    // this runtime does not distribute yet: compatible is the incremental protocol it
    // fully honours (Kafka's default is sessioned).
    default: 'compatible',
    validator: oneOf('eager', 'compatible', 'sessioned'),
    group: membership,
    doc: 'Rebalance protocol: eager stops everything on each rebalance; compatible and sessioned are incremental (KIP-415).',
  }),
  define<string>({
    name: 'group.instance.id',
    type: 'string',
    default: null,
    group: membership,
    defaultDoc: 'none (dynamic membership)',
    doc: 'Static membership (KIP-345): a worker restarting with the same id within session.timeout.ms keeps its work without a rebalance.',
  }),
  define<boolean>({
    name: 'topic.tracking.enable',
    type: 'boolean',
    default: true,
    group: tasks,
    doc: 'Record the topics each connector uses (GET /connectors/{name}/topics).',
  }),
  define<boolean>({
    name: 'topic.tracking.allow.reset',
    type: 'boolean',
    default: true,
    group: tasks,
    doc: 'Allow PUT /connectors/{name}/topics/reset.',
  }),
  define<number>({
    name: 'worker.sync.timeout.ms',
    type: 'int',
    default: 3000,
    validator: atLeast(0),
    group: membership,
    doc: 'How long a worker waits to catch up on the config topic before leaving the group.',
  }),
  define<number>({
    name: 'worker.unsync.backoff.ms',
    type: 'int',
    default: 300000,
    validator: atLeast(0),
    group: membership,
    doc: 'How long a worker that could not catch up waits before rejoining.',
  }),
  define<string>({
    name: 'exactly.once.source.support',
    type: 'string',
    default: 'disabled',
    validator: oneOf('disabled', 'preparing', 'enabled'),
    group: tasks,
    doc: 'enabled: every source task writes its records and offsets in transactions, after zombie fencing (KIP-618); preparing: a rolling-upgrade step, still at-least-once; standalone mode refuses both.',
  }),
];

const standaloneOnlyDefs: AnyConfigDef[] = [
  define<string>({
    name: 'offset.storage.file.filename',
    type: 'string',
    default: './data/connect.offsets',
    validator: nonEmpty,
    importance: 'high',
    group: offsets,
    doc: 'File holding source offsets in standalone mode (Kafka requires it; ours has a default).',
  }),
];

/** Keys of `connect worker` (distributed mode), including the embedded broker's. */
export const distributedWorkerDefs: readonly AnyConfigDef[] = [
  ...commonDefs,
  ...loggingDefs,
  ...distributedOnlyDefs,
  ...brokerConfigDefs,
];

/** Keys of `connect standalone`, including the embedded broker's. */
export const standaloneWorkerDefs: readonly AnyConfigDef[] = [
  ...commonDefs,
  ...loggingDefs,
  ...standaloneOnlyDefs,
  ...brokerConfigDefs,
];

/**
 * Distributed-mode keys that standalone mode accepts without a warning, so one
 * worker.properties serves both modes (they mean nothing without a group).
 */
export const distributedOnlyKeys: readonly string[] = distributedOnlyDefs.map((d) => d.name);

/** The Connect keys alone, without the broker's, for the reference tables. */
export const connectWorkerDefs: readonly AnyConfigDef[] = [
  ...commonDefs,
  ...loggingDefs,
  ...distributedOnlyDefs,
  ...standaloneOnlyDefs,
];

/**
 * Prefixes whose keys are passed through to a client or plugin and so are known even
 * without a definition (producer.acks, key.converter.schemas.registry.url, ...).
 */
export const workerPassthroughPrefixes: readonly string[] = [
  'producer.',
  'consumer.',
  'admin.',
  'key.converter.',
  'value.converter.',
  'header.converter.',
  'config.providers.',
  'listeners.https.',
  'ssl.',
  'sasl.',
];

/** Where the REST server listens: listeners, else the deprecated rest.host.name/rest.port. */
export function restListeners(values: Record<string, unknown>): string[] {
  const listeners = values.listeners as string[] | null;
  if (listeners && listeners.length > 0) return listeners;
  const host = (values['rest.host.name'] as string | null) ?? '';
  return [`http://${host}:${values['rest.port'] as number}`];
}

/**
 * rest.host.name and rest.port are read only when listeners is not set (Kafka's
 * RestServerConfig does the same). Given while listeners is set, they would do nothing
 * without a word: `-o rest.port=8084` or CONNECT_REST_PORT with a properties file that
 * sets listeners (as config/worker.properties does) left the API on the file's port.
 * One warning names the keys, where each was set, and that listeners wins.
 */
export function restListenerWarnings(
  values: Record<string, unknown>,
  given: (key: string) => string | undefined,
): string[] {
  const listeners = values.listeners as string[] | null;
  if (!listeners || listeners.length === 0) return [];
  const ignored = ['rest.host.name', 'rest.port'].filter((key) => given(key) !== undefined);
  if (ignored.length === 0) return [];
  const named = ignored.map((key) => `${key}=${String(values[key] ?? '')}${given(key)}`);
  const verb = ignored.length === 1 ? 'is' : 'are';
  return [
    `${named.join(' and ')} ${verb} ignored because listeners${given('listeners') ?? ''} is set ` +
      `and wins: the REST API listens on ${listeners.join(',')}. To move it, set listeners ` +
      `(e.g. -o listeners=http://127.0.0.1:8084 or CONNECT_LISTENERS) instead of ${ignored.join(' and ')}.`,
  ];
}

/** Whether this worker runs the embedded broker (explicit, else when bootstrap.servers is empty). */
export function embedsBroker(values: Record<string, unknown>): boolean {
  const explicit = values['broker.embedded'] as boolean | null;
  if (explicit !== null && explicit !== undefined) return explicit;
  return (values['bootstrap.servers'] as string[]).length === 0;
}
