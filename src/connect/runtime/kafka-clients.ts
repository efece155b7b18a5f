/**
 * The worker's Kafka clients, configured from Kafka Connect's keys: kafkajs for
 * consumers and admin, and the settings of the source tasks' own producer
 * (source-producer.ts). Keys read: the worker's `bootstrap.servers`, `client.id`,
 * `request.timeout.ms`, `retry.backoff.ms`; `producer.*` / `consumer.*` passthrough
 * keys, and per connector `producer.override.*` / `consumer.override.*`
 * (connector.client.config.override.policy=All; None and Principal refuse them, as in
 * Kafka).
 *
 * Only Kafka's key names are read (`compression.type`, `max.request.size`,
 * `buffer.memory`, `max.in.flight.requests.per.connection`, `delivery.timeout.ms`,
 * `auto.offset.reset`, ...); they are mapped onto client options here and nowhere
 * else. Every other key Kafka defines for a client is refused by name
 * (client-keys.ts), as are `admin.*` keys: nothing is accepted and ignored.
 * kafkajs's own logs go to our pino logger.
 * Compression codecs other than gzip are registered with kafkajs from
 * src/protocol/compression.ts, so consumers read batches any producer compressed.
 */
import kafkajs, {
  CompressionTypes,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
} from 'kafkajs';
import type { GroupConsumerSettings } from '../../protocol/client/group-consumer.ts';
import { CompressionCodec, compress, decompress } from '../../protocol/compression.ts';
import type { Logger } from '../../util/logger.ts';
import { ConnectException } from '../api/errors.ts';
import { type ClientKind, type ClientOverridePolicy, clientKeyProblems } from './client-keys.ts';
import { withPrefix } from './plugin-config.ts';

let codecsRegistered = false;

function registerCodecs(): void {
  if (codecsRegistered) return;
  codecsRegistered = true;
  const codec = (id: 2 | 3 | 4) => () => ({
    compress: async (encoder: { buffer: Buffer }) => compress(id, encoder.buffer),
    decompress: async (buffer: Buffer) => decompress(id, buffer),
  });
  // kafkajs is CommonJS and Node's ESM loader does not see CompressionCodecs as a named export.
  const codecs = kafkajs.CompressionCodecs;
  codecs[CompressionTypes.Snappy] = codec(2);
  codecs[CompressionTypes.LZ4] = codec(3);
  codecs[CompressionTypes.ZSTD] = codec(4);
}

function pinoLevel(level: logLevel): 'error' | 'warn' | 'info' | 'debug' {
  switch (level) {
    case logLevel.ERROR:
    case logLevel.NOTHING:
      return 'error';
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'info';
    default:
      return 'debug';
  }
}

/**
 * What kafkajs warns for every idempotent producer whose retries are bounded, on every
 * worker start. Bounded on purpose: a send that runs out of retries fails to its caller
 * (the task fails or the store write is refused), it is never dropped, and one request
 * in flight keeps the order; so the line says nothing a user can act on.
 */
const IDEMPOTENT_RETRIES_WARNING =
  'Limiting retries for the idempotent producer may invalidate EoS guarantees';

/** A kafkajs client for the worker's cluster. */
export function createKafka(
  worker: Readonly<Record<string, unknown>>,
  logger: Logger,
  clientId?: string,
): Kafka {
  registerCodecs();
  const brokers = (worker['bootstrap.servers'] as string[] | undefined) ?? [];
  if (brokers.length === 0) {
    throw new ConnectException(
      'bootstrap.servers is empty: the worker has no Kafka cluster to talk to',
    );
  }
  const config: KafkaConfig = {
    brokers,
    clientId: clientId ?? ((worker['client.id'] as string | undefined) || 'connect-worker'),
    requestTimeout: (worker['request.timeout.ms'] as number | undefined) ?? 40_000,
    retry: {
      initialRetryTime: (worker['retry.backoff.ms'] as number | undefined) ?? 100,
      retries: 8,
    },
    // kafkajs's INFO is chatty (every group join); warnings and errors are what matter.
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...rest } = entry.log;
      if (message === IDEMPOTENT_RETRIES_WARNING) return;
      logger[pinoLevel(entry.level)]({ kafkajs: entry.namespace, ...rest }, message);
    },
  };
  return new Kafka(config);
}

/** connector.client.config.override.policy of a worker config (Kafka's default All). */
export function overridePolicy(worker: Readonly<Record<string, unknown>>): ClientOverridePolicy {
  const policy = worker['connector.client.config.override.policy'];
  return policy === 'None' || policy === 'Principal' ? policy : 'All';
}

/**
 * A client's effective Kafka keys: the worker's `<kind>.*` keys overridden by the
 * connector's `<kind>.override.*` keys. Throws, naming every key, when one is refused
 * (client-keys.ts) or the override policy does not allow it: validation refuses them
 * first, so this catches only configs stored before (as Kafka's Worker fails the task).
 */
export function clientConfig(
  kind: ClientKind,
  worker: Readonly<Record<string, unknown>>,
  connector: Readonly<Record<string, string>>,
): Record<string, string> {
  const problems = [
    ...clientKeyProblems(kind, `${kind}.`, worker),
    ...clientKeyProblems(kind, `${kind}.override.`, connector, overridePolicy(worker)),
  ];
  if (problems.length > 0) {
    throw new ConnectException(problems.map((p) => `${p.key}: ${p.message}`).join('; '));
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(withPrefix(worker, `${kind}.`))) out[k] = String(v);
  Object.assign(out, withPrefix(connector, `${kind}.override.`));
  return out;
}

export function numberKey(
  config: Readonly<Record<string, string>>,
  key: string,
  fallback: number,
): number {
  const raw = config[key];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n))
    throw new ConnectException(`Invalid value ${raw} for configuration ${key}: not a number`);
  return n;
}

/** A key whose value is one of `allowed` (case-insensitive), else `fallback`. */
function choiceKey<T extends string>(
  config: Readonly<Record<string, string>>,
  key: string,
  fallback: T,
  allowed: readonly T[],
): T {
  const value = (config[key] ?? fallback).trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) {
    const list = `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
    throw new ConnectException(`Invalid value ${value} for configuration ${key}: expected ${list}`);
  }
  return value as T;
}

/** A number key a client inherits from the worker's own key of that name when it does not set it. */
function inheritedNumberKey(
  config: Readonly<Record<string, string>>,
  worker: Readonly<Record<string, unknown>>,
  key: string,
  fallback: number,
): number {
  return numberKey(config, key, (worker[key] as number | undefined) ?? fallback);
}

const compressionCodecs: Record<string, CompressionCodec> = {
  none: CompressionCodec.none,
  gzip: CompressionCodec.gzip,
  snappy: CompressionCodec.snappy,
  lz4: CompressionCodec.lz4,
  zstd: CompressionCodec.zstd,
};

/** What the source task runner and its producer need from the producer keys. */
export interface ProducerSettings {
  compression: CompressionCodec;
  /** KIP-390's level for the codec (compression.<codec>.level); undefined: the codec's default. */
  compressionLevel?: number;
  /** client.id; undefined: the worker's connector-producer-<connector>-<task>. */
  clientId?: string;
  /** How long partition counts are trusted before they are looked up again (metadata.max.age.ms). */
  metadataMaxAgeMs: number;
  /** Upper bound of one produce request's record bytes (Kafka's max.request.size). */
  maxRequestBytes: number;
  /** Outstanding (unacknowledged) record bytes before polling pauses (buffer.memory). */
  bufferMemory: number;
  /** Produce requests in flight at once (max.in.flight.requests.per.connection, 1 to 5). */
  maxInFlight: number;
  /** How long to wait for a produce answer (request.timeout.ms). */
  requestTimeoutMs: number;
  /** How long a record may keep being retried before the task fails (delivery.timeout.ms). */
  deliveryTimeoutMs: number;
  /** Pause before a retry (retry.backoff.ms). */
  retryBackoffMs: number;
  /** Exactly-once sources: transaction.timeout.ms (the client's default when unset). */
  transactionTimeoutMs?: number;
}

/**
 * The producer keys, defaulting as Kafka's producer does. `worker` supplies the
 * worker-level request.timeout.ms and retry.backoff.ms when the producer keys do not.
 */
export function producerSettings(
  config: Readonly<Record<string, string>>,
  worker: Readonly<Record<string, unknown>> = {},
): ProducerSettings {
  const name = (config['compression.type'] ?? 'none').trim().toLowerCase();
  const compression = compressionCodecs[name];
  if (compression === undefined) {
    throw new ConnectException(
      `Invalid value ${name} for configuration compression.type: expected none, gzip, snappy, lz4 or zstd`,
    );
  }
  const acks = config.acks?.trim();
  // Offsets are committed for acknowledged records only; anything weaker than acks=all
  // would let a committed offset cover a record a broker failover loses.
  if (acks !== undefined && acks !== 'all' && acks !== '-1') {
    throw new ConnectException(
      `Invalid value ${acks} for configuration acks: source tasks produce with acks=all`,
    );
  }
  const idempotence = config['enable.idempotence']?.trim().toLowerCase();
  if (idempotence !== undefined && idempotence !== 'true') {
    throw new ConnectException(
      `Invalid value ${idempotence} for configuration enable.idempotence: source tasks always produce idempotently, so retries never duplicate or reorder records`,
    );
  }
  const maxInFlight = numberKey(config, 'max.in.flight.requests.per.connection', 5);
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 5) {
    throw new ConnectException(
      `Invalid value ${maxInFlight} for configuration max.in.flight.requests.per.connection: an idempotent producer allows 1 to 5`,
    );
  }
  const level = compressionLevel(config, name);
  const clientId = config['client.id']?.trim();
  return {
    compression,
    ...(level !== undefined ? { compressionLevel: level } : {}),
    ...(clientId ? { clientId } : {}),
    metadataMaxAgeMs: inheritedNumberKey(config, worker, 'metadata.max.age.ms', 300_000),
    maxRequestBytes: numberKey(config, 'max.request.size', 1_048_576),
    bufferMemory: numberKey(config, 'buffer.memory', 33_554_432),
    maxInFlight,
    requestTimeoutMs: inheritedNumberKey(config, worker, 'request.timeout.ms', 30_000),
    deliveryTimeoutMs: numberKey(config, 'delivery.timeout.ms', 120_000),
    retryBackoffMs: inheritedNumberKey(config, worker, 'retry.backoff.ms', 100),
    ...(config['transaction.timeout.ms'] !== undefined
      ? { transactionTimeoutMs: numberKey(config, 'transaction.timeout.ms', 60_000) }
      : {}),
  };
}

/** KIP-390's level keys, each checked as Kafka's CompressionType does: [min, max] and any exception. */
const LEVELS = {
  gzip: { key: 'compression.gzip.level', min: 1, max: 9, also: -1 },
  lz4: { key: 'compression.lz4.level', min: 1, max: 17, also: undefined },
  zstd: { key: 'compression.zstd.level', min: -131072, max: 22, also: undefined },
} as const;

/** The level set for `codec` (every level key is checked, as Kafka's producer does). */
function compressionLevel(
  config: Readonly<Record<string, string>>,
  codec: string,
): number | undefined {
  let chosen: number | undefined;
  for (const [name, { key, min, max, also }] of Object.entries(LEVELS)) {
    if (config[key] === undefined || config[key].trim() === '') continue;
    const level = numberKey(config, key, 0);
    if (!Number.isInteger(level) || ((level < min || level > max) && level !== also)) {
      const range = `between ${min} and ${max}${also !== undefined ? ` or equal to ${also}` : ''}`;
      throw new ConnectException(
        `Invalid value ${config[key]} for configuration ${key}: Value must be ${range}`,
      );
    }
    if (name === codec) chosen = level;
  }
  return chosen;
}

/** What the sink tasks' consumer (src/protocol/client/group-consumer.ts) takes from the consumer keys. */
export type ConsumerSettings = GroupConsumerSettings;

/**
 * The consumer keys, defaulting as Kafka's consumer does (auto.offset.reset as Kafka
 * Connect sets it for sinks). `worker` supplies the worker-level request.timeout.ms,
 * retry.backoff.ms and metadata.max.age.ms when the consumer keys do not.
 */
export function consumerSettings(
  config: Readonly<Record<string, string>>,
  worker: Readonly<Record<string, unknown>> = {},
): ConsumerSettings {
  const settings: ConsumerSettings = {
    sessionTimeoutMs: numberKey(config, 'session.timeout.ms', 45_000),
    heartbeatIntervalMs: numberKey(config, 'heartbeat.interval.ms', 3_000),
    rebalanceTimeoutMs: numberKey(config, 'max.poll.interval.ms', 300_000),
    fetchMaxBytes: numberKey(config, 'fetch.max.bytes', 52_428_800),
    maxPartitionFetchBytes: numberKey(config, 'max.partition.fetch.bytes', 1_048_576),
    fetchMinBytes: numberKey(config, 'fetch.min.bytes', 1),
    fetchMaxWaitMs: numberKey(config, 'fetch.max.wait.ms', 500),
    autoOffsetReset: choiceKey(config, 'auto.offset.reset', 'earliest', [
      'earliest',
      'latest',
      'none',
    ]),
    readCommitted:
      choiceKey(config, 'isolation.level', 'read_uncommitted', [
        'read_uncommitted',
        'read_committed',
      ]) === 'read_committed',
    allowAutoTopicCreation:
      choiceKey(config, 'allow.auto.create.topics', 'true', ['true', 'false']) === 'true',
    metadataMaxAgeMs: inheritedNumberKey(config, worker, 'metadata.max.age.ms', 300_000),
    requestTimeoutMs: inheritedNumberKey(config, worker, 'request.timeout.ms', 30_000),
    retryBackoffMs: inheritedNumberKey(config, worker, 'retry.backoff.ms', 100),
  };
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value === 'number' && (!Number.isInteger(value) || value < 0)) {
      throw new ConnectException(
        `Invalid value ${value} for the consumer setting ${name}: expected a whole number of 0 or more`,
      );
    }
  }
  return settings;
}
