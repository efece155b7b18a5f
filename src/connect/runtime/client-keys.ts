/**
 * Kafka's client keys, as a worker's `producer.*` / `consumer.*` / `admin.*` keys and a
 * connector's `producer.override.*` / `consumer.override.*` / `admin.override.*` keys
 * (KIP-458) carry them, and what the worker's clients do with each one.
 *
 * Kafka Connect hands those keys to Kafka's Java clients, which implement every one of
 * them. The clients here implement fewer, so every key Kafka's ProducerConfig,
 * ConsumerConfig and AdminClientConfig define (4.0, with the SSL and SASL keys they
 * include) is one of:
 *   - read: the client applies it (kafka-clients.ts maps it onto the client's options);
 *   - fixed: the client behaves as one value of it does in Kafka; that value is
 *     accepted, any other is refused saying what to do instead;
 *   - refused: any value is refused, saying why.
 * A key Kafka does not define is refused too (Kafka's clients only log it, but no
 * interceptor or plugin class here could read it), with the nearest key when it looks
 * like a typo. Nothing is accepted and ignored: a `producer.override.linger.ms=100` or a
 * `consumer.override.security.protocol=SASL_SSL` copied from a Kafka Connect deployment
 * is refused by name, at /config/validate and at worker start, rather than doing nothing.
 *
 * The connector.client.config.override.policy keys are Kafka's: None refuses every
 * override with Kafka's message; Principal allows only the SASL keys and
 * security.protocol, which these clients refuse anyway.
 */
import { nearestKey } from './unknown-connector-keys.ts';

export type ClientKind = 'producer' | 'consumer' | 'admin';

type KeyRule =
  | { readonly kind: 'read' }
  | {
      readonly kind: 'fixed';
      readonly accepts: (value: string) => boolean;
      readonly reason: string;
    }
  | { readonly kind: 'refused'; readonly reason: string };

const READ: KeyRule = { kind: 'read' };

function fixed(value: string, reason: string): KeyRule {
  return { kind: 'fixed', accepts: (v) => v.trim().toLowerCase() === value, reason };
}

function refused(reason: string): KeyRule {
  return { kind: 'refused', reason };
}

const JAVA_CLASSES = refused('it names Java classes, and this runtime does not load Java classes');
const NO_TLS_OR_SASL_REASON =
  "the worker's Kafka clients connect in PLAINTEXT only: TLS and SASL are not implemented";
const NO_TLS_OR_SASL = refused(NO_TLS_OR_SASL_REASON);
const NETWORK_TUNING = refused(
  "the worker's Kafka client does not implement this setting; its connections use fixed socket, reconnect and DNS behaviour",
);
const SAME_CLUSTER = (what: string) =>
  refused(`${what} the worker's Kafka cluster (the worker's bootstrap.servers)`);

const SSL_KEYS = [
  'ssl.protocol',
  'ssl.provider',
  'ssl.cipher.suites',
  'ssl.enabled.protocols',
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.truststore.certificates',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.keymanager.algorithm',
  'ssl.trustmanager.algorithm',
  'ssl.endpoint.identification.algorithm',
  'ssl.secure.random.implementation',
  'ssl.engine.factory.class',
];

const SASL_KEYS = [
  'sasl.kerberos.service.name',
  'sasl.kerberos.kinit.cmd',
  'sasl.kerberos.ticket.renew.window.factor',
  'sasl.kerberos.ticket.renew.jitter',
  'sasl.kerberos.min.time.before.relogin',
  'sasl.login.refresh.window.factor',
  'sasl.login.refresh.window.jitter',
  'sasl.login.refresh.min.period.seconds',
  'sasl.login.refresh.buffer.seconds',
  'sasl.mechanism',
  'sasl.jaas.config',
  'sasl.client.callback.handler.class',
  'sasl.login.callback.handler.class',
  'sasl.login.class',
  'sasl.login.connect.timeout.ms',
  'sasl.login.read.timeout.ms',
  'sasl.login.retry.backoff.max.ms',
  'sasl.login.retry.backoff.ms',
  'sasl.oauthbearer.scope.claim.name',
  'sasl.oauthbearer.sub.claim.name',
  'sasl.oauthbearer.token.endpoint.url',
  'sasl.oauthbearer.jwks.endpoint.url',
  'sasl.oauthbearer.jwks.endpoint.refresh.ms',
  'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms',
  'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms',
  'sasl.oauthbearer.clock.skew.seconds',
  'sasl.oauthbearer.expected.audience',
  'sasl.oauthbearer.expected.issuer',
  'sasl.oauthbearer.header.urlencode',
];

/** Keys every Kafka client defines that no client here implements. */
const COMMON_REFUSED: ReadonlyArray<readonly [string, KeyRule]> = [
  ['client.dns.lookup', NETWORK_TUNING],
  ['send.buffer.bytes', NETWORK_TUNING],
  ['receive.buffer.bytes', NETWORK_TUNING],
  ['reconnect.backoff.ms', NETWORK_TUNING],
  ['reconnect.backoff.max.ms', NETWORK_TUNING],
  ['retry.backoff.max.ms', NETWORK_TUNING],
  ['socket.connection.setup.timeout.ms', NETWORK_TUNING],
  ['socket.connection.setup.timeout.max.ms', NETWORK_TUNING],
  ['connections.max.idle.ms', NETWORK_TUNING],
  ['metadata.recovery.strategy', NETWORK_TUNING],
  [
    'enable.metrics.push',
    fixed(
      'false',
      'the client does not push its metrics to the broker (KIP-714); the worker serves them on its own /metrics',
    ),
  ],
  ['metrics.sample.window.ms', refused("client metrics are the worker's own (GET /metrics)")],
  ['metrics.num.samples', refused("client metrics are the worker's own (GET /metrics)")],
  ['metrics.recording.level', refused("client metrics are the worker's own (GET /metrics)")],
  ['metric.reporters', JAVA_CLASSES],
  ['security.providers', JAVA_CLASSES],
  ['security.protocol', fixed('plaintext', NO_TLS_OR_SASL_REASON)],
  ...SSL_KEYS.map((k) => [k, NO_TLS_OR_SASL] as const),
  ...SASL_KEYS.map((k) => [k, NO_TLS_OR_SASL] as const),
];

const CONVERTERS_SERIALIZE = refused(
  "the connector's converters (key.converter, value.converter) turn records into bytes; the client only moves those bytes",
);

const PRODUCER_RULES = new Map<string, KeyRule>([
  ['acks', READ],
  ['enable.idempotence', READ],
  ['compression.type', READ],
  ['compression.gzip.level', READ],
  ['compression.lz4.level', READ],
  ['compression.zstd.level', READ],
  ['max.in.flight.requests.per.connection', READ],
  ['max.request.size', READ],
  ['buffer.memory', READ],
  ['request.timeout.ms', READ],
  ['delivery.timeout.ms', READ],
  ['retry.backoff.ms', READ],
  ['transaction.timeout.ms', READ],
  ['metadata.max.age.ms', READ],
  ['client.id', READ],
  ['bootstrap.servers', SAME_CLUSTER('source tasks produce to')],
  [
    'linger.ms',
    fixed(
      '0',
      "a source task's records are sent as soon as a poll has converted them, one request per poll of up to max.request.size, so there is nothing to linger for; for bigger requests raise the connector's own batch size (max.batch.size for Postgres CDC)",
    ),
  ],
  [
    'batch.size',
    refused(
      'the source producer writes one batch per partition in each request, so a request is bounded by max.request.size, not by a batch size; set max.request.size instead',
    ),
  ],
  [
    'retries',
    fixed(
      '2147483647',
      "the source producer retries every retriable failure until delivery.timeout.ms, as Kafka's producer does with retries at its default (2147483647); bound retrying with delivery.timeout.ms",
    ),
  ],
  [
    'max.block.ms',
    refused(
      'sends never block on metadata or memory: the task pauses polling at buffer.memory, and metadata waits count against delivery.timeout.ms',
    ),
  ],
  ['metadata.max.idle.ms', NETWORK_TUNING],
  ['key.serializer', CONVERTERS_SERIALIZE],
  ['value.serializer', CONVERTERS_SERIALIZE],
  [
    'transactional.id',
    refused(
      'the worker sets it for exactly-once source tasks (<group.id>-<connector>-<task>, as Kafka Connect does)',
    ),
  ],
  ['partitioner.class', JAVA_CLASSES],
  ['interceptor.classes', JAVA_CLASSES],
  [
    'partitioner.ignore.keys',
    fixed(
      'false',
      "records with a key go to the key's partition (murmur2, as Kafka's producer does); records without one are spread round-robin",
    ),
  ],
  [
    'partitioner.adaptive.partitioning.enable',
    refused(
      "records without a key are spread round-robin over the partitions, not by Kafka's adaptive sticky partitioner",
    ),
  ],
  [
    'partitioner.availability.timeout.ms',
    refused(
      "records without a key are spread round-robin over the partitions, not by Kafka's adaptive sticky partitioner",
    ),
  ],
  ...COMMON_REFUSED,
]);

const RANGE_ASSIGNOR = 'org.apache.kafka.clients.consumer.RangeAssignor';

const CONSUMER_RULES = new Map<string, KeyRule>([
  ['session.timeout.ms', READ],
  ['heartbeat.interval.ms', READ],
  ['max.poll.interval.ms', READ],
  ['max.poll.records', READ],
  ['fetch.max.bytes', READ],
  ['max.partition.fetch.bytes', READ],
  ['fetch.min.bytes', READ],
  ['fetch.max.wait.ms', READ],
  ['auto.offset.reset', READ],
  ['isolation.level', READ],
  ['allow.auto.create.topics', READ],
  ['metadata.max.age.ms', READ],
  ['request.timeout.ms', READ],
  ['retry.backoff.ms', READ],
  ['client.id', READ],
  ['bootstrap.servers', SAME_CLUSTER('sink tasks consume from')],
  [
    'group.id',
    refused(
      "a sink connector's tasks share the group connect-<connector name>, the group its offsets (GET /connectors/<name>/offsets) are kept in",
    ),
  ],
  [
    'group.instance.id',
    refused("static membership (KIP-345) is not implemented by the sink tasks' consumer"),
  ],
  [
    'group.protocol',
    fixed(
      'classic',
      "sink tasks join their group with the classic protocol; the consumer protocol (KIP-848) is served by the broker but not spoken by the sink tasks' consumer",
    ),
  ],
  ['group.remote.assignor', refused('it applies to group.protocol=consumer only')],
  [
    'partition.assignment.strategy',
    {
      kind: 'fixed',
      accepts: (v) => {
        const list = v.split(',').map((s) => s.trim().replace(/^class\s+/, ''));
        return list.length === 1 && (list[0] === RANGE_ASSIGNOR || list[0] === 'range');
      },
      reason: `sink tasks assign partitions with the range assignor only (${RANGE_ASSIGNOR})`,
    },
  ],
  [
    'enable.auto.commit',
    fixed(
      'false',
      'sink tasks commit the offsets of what their put() and flush() took, every offset.flush.interval.ms, as Kafka Connect does; auto-commit would commit records not yet written',
    ),
  ],
  [
    'auto.commit.interval.ms',
    refused('sink tasks do not auto-commit; offset.flush.interval.ms sets how often they commit'),
  ],
  ['check.crcs', fixed('true', "the consumer checks every batch's CRC-32C")],
  [
    'exclude.internal.topics',
    fixed('true', "topics.regex never matches internal topics, as with Kafka Connect's default"),
  ],
  [
    'client.rack',
    refused('rack-aware fetching from follower replicas (KIP-392) is not implemented'),
  ],
  [
    'default.api.timeout.ms',
    refused("the sink tasks' consumer bounds each call by request.timeout.ms"),
  ],
  ['key.deserializer', CONVERTERS_SERIALIZE],
  ['value.deserializer', CONVERTERS_SERIALIZE],
  ['interceptor.classes', JAVA_CLASSES],
  ...COMMON_REFUSED,
]);

const ADMIN_NOT_READ = refused(
  "the worker's admin client (topic creation, dead letter queues) is configured by the worker's own keys (bootstrap.servers, client.id, request.timeout.ms, retry.backoff.ms); admin.* keys are not read",
);

const ADMIN_KEYS = [
  'bootstrap.servers',
  'client.id',
  'metadata.max.age.ms',
  'request.timeout.ms',
  'retry.backoff.ms',
  'retries',
  'default.api.timeout.ms',
];

const ADMIN_RULES = new Map<string, KeyRule>([
  ...ADMIN_KEYS.map((k) => [k, ADMIN_NOT_READ] as const),
  ...COMMON_REFUSED,
]);

const RULES: Readonly<Record<ClientKind, ReadonlyMap<string, KeyRule>>> = {
  producer: PRODUCER_RULES,
  consumer: CONSUMER_RULES,
  admin: ADMIN_RULES,
};

/** Kafka's override policy keys (ConnectorClientConfigOverridePolicy). */
export type ClientOverridePolicy = 'All' | 'None' | 'Principal';

/** PrincipalConnectorClientConfigOverridePolicy's allowed keys. */
const PRINCIPAL_KEYS = new Set(['sasl.jaas.config', 'sasl.mechanism', 'security.protocol']);

export interface ClientKeyProblem {
  /** The key as given (with its prefix). */
  readonly key: string;
  readonly message: string;
}

/**
 * What is wrong with the client keys of `config` under `prefix` (a worker's
 * `producer.` or a connector's `producer.override.`, ...), one problem per refused key.
 */
export function clientKeyProblems(
  kind: ClientKind,
  prefix: string,
  config: Readonly<Record<string, unknown>>,
  policy: ClientOverridePolicy = 'All',
): ClientKeyProblem[] {
  const problems: ClientKeyProblem[] = [];
  for (const [key, raw] of Object.entries(config)) {
    if (!key.startsWith(prefix) || raw === null || raw === undefined) continue;
    const name = key.slice(prefix.length);
    const message =
      prefix.endsWith('.override.') && policyRefuses(policy, name)
        ? `The '${policy}' policy does not allow '${name}' to be overridden in the connector configuration.`
        : keyProblem(kind, name, String(raw));
    if (message !== undefined) problems.push({ key, message });
  }
  return problems;
}

function policyRefuses(policy: ClientOverridePolicy, name: string): boolean {
  return policy === 'None' || (policy === 'Principal' && !PRINCIPAL_KEYS.has(name));
}

/**
 * Why `name=value` is refused for a `kind` client, or undefined when it is read or has
 * its fixed value. Only a fixed key's value is shown (a refused one may be a password).
 */
export function keyProblem(kind: ClientKind, name: string, value: string): string | undefined {
  const rule = RULES[kind].get(name);
  if (rule === undefined) {
    const near = nearestKey(name, RULES[kind].keys());
    return near === undefined
      ? `not supported: ${name} is not a ${kind} config Kafka defines, and nothing here reads it`
      : `not supported: ${name} is not a ${kind} config Kafka defines: did you mean '${near}'?`;
  }
  if (rule.kind === 'read') return undefined;
  if (rule.kind === 'refused') return `not supported: ${name}: ${rule.reason}`;
  // A fixed key's value is never a secret, and it says which value was refused.
  return rule.accepts(value) ? undefined : `not supported: ${name}=${value}: ${rule.reason}`;
}

/** The keys a `kind` client reads, for the docs and tests. */
export function readClientKeys(kind: ClientKind): string[] {
  return [...RULES[kind]].filter(([, r]) => r.kind === 'read').map(([k]) => k);
}

/** Every key Kafka defines for a `kind` client, for tests. */
export function kafkaClientKeys(kind: ClientKind): string[] {
  return [...RULES[kind].keys()];
}

/**
 * A worker config's client keys that would do nothing: its `producer.*`, `consumer.*`
 * and `admin.*` keys as clientKeyProblems has them, and its own `ssl.*`, `sasl.*` and
 * `listeners.https.*` keys (Kafka Connect's TLS and SASL for its clients and its REST
 * API, neither implemented here).
 */
export function workerClientKeyProblems(
  values: Readonly<Record<string, unknown>>,
): ClientKeyProblem[] {
  const problems = (['producer', 'consumer', 'admin'] as const).flatMap((kind) =>
    clientKeyProblems(kind, `${kind}.`, values),
  );
  for (const key of Object.keys(values)) {
    if (key.startsWith('ssl.') || key.startsWith('sasl.')) {
      problems.push({ key, message: `not supported: ${key}: ${NO_TLS_OR_SASL_REASON}` });
    } else if (key.startsWith('listeners.https.')) {
      problems.push({
        key,
        message: `not supported: ${key}: the REST API serves http listeners only`,
      });
    }
  }
  return problems;
}
