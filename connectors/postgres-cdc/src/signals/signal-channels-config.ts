/**
 * The keys of Debezium's signal channels (CommonConnectorConfig, KafkaSignalChannel,
 * FileSignalChannel) and what they become:
 *   signal.enabled.channels      source, kafka, file (case-insensitive); jmx and
 *                                in-process are refused by name
 *   signal.poll.interval.ms      how often the kafka and file channels are read (5000)
 *   signal.kafka.topic           default <topic.prefix>-signal; partition 0 is read
 *   signal.kafka.groupId         default kafka-signal
 *   signal.kafka.bootstrap.servers  default the worker's bootstrap.servers (Debezium
 *                                has none: it must be given there)
 *   signal.kafka.poll.timeout.ms how long each read of the topic waits (100)
 *   signal.consumer.*            consumer properties, over the signal.kafka.* ones as in
 *                                Debezium; only those the reader implements are let
 *                                through (CONSUMER_KEYS), the others refused by name
 *   signal.file                  default file-signals.txt (relative to the worker's
 *                                working directory, as Debezium's java.io.File)
 * The kafka and file channels need signal.data.collection: the incremental snapshots
 * their execute-snapshot signals start write their watermarks there (Debezium, too,
 * says the source channel is required for incremental snapshot signals).
 */
import {
  type AnyConfigDef,
  atLeast,
  type ConfigError,
  define,
  nonEmpty,
} from '../../../../src/connect/api/index.ts';

export type SignalChannel = 'source' | 'kafka' | 'file';

const CHANNELS: readonly SignalChannel[] = ['source', 'kafka', 'file'];

/** Debezium channels that cannot run here, with why. */
const REFUSED_CHANNELS: Readonly<Record<string, string>> = {
  jmx: 'the jmx channel (a JMX MBean operation) needs a Java VM; send signals through the kafka, file or source channel instead',
  'in-process':
    'the in-process channel is for Debezium Embedded (Java callers); send signals through the kafka, file or source channel instead',
};

export const CONSUMER_PREFIX = 'signal.consumer.';

/**
 * The consumer properties of signal.consumer.* the topic reader honours, with the
 * values it accepts (null: any). The reader reads partition 0 by assignment, as
 * Debezium's consumer does, so group-membership keys (session.timeout.ms, ...) would
 * change nothing and are refused with the rest.
 */
const CONSUMER_KEYS: Readonly<Record<string, readonly string[] | null>> = {
  'bootstrap.servers': null,
  'client.id': null,
  'group.id': null,
  'auto.offset.reset': ['earliest', 'latest', 'none'],
  'max.partition.fetch.bytes': null,
  'request.timeout.ms': null,
  // What the reader does anyway: keys and values read as UTF-8 text, offsets committed.
  'key.deserializer': ['org.apache.kafka.common.serialization.StringDeserializer'],
  'value.deserializer': ['org.apache.kafka.common.serialization.StringDeserializer'],
  'enable.auto.commit': ['true'],
  'security.protocol': ['plaintext'],
};

const NUMERIC_CONSUMER_KEYS = new Set(['max.partition.fetch.bytes', 'request.timeout.ms']);

export const signalChannelConfigDefs: readonly AnyConfigDef[] = [
  define<string[]>({
    name: 'signal.enabled.channels',
    type: 'list',
    default: ['source'],
    validator: (v) => {
      const problems = v.flatMap((c) => {
        const name = c.toLowerCase();
        if ((CHANNELS as readonly string[]).includes(name)) return [];
        const why = REFUSED_CHANNELS[name];
        return [why ? `'${c}' is not supported: ${why}` : `'${c}' is not a signal channel`];
      });
      return problems.length === 0
        ? undefined
        : `${problems.join('; ')} (channels: ${CHANNELS.join(', ')})`;
    },
    doc:
      'Where signals are read from: source (inserts into signal.data.collection), kafka ' +
      '(signal.kafka.topic) and file (signal.file), as a comma-separated list.',
    group: 'Signals',
  }),
  define({
    name: 'signal.poll.interval.ms',
    type: 'long',
    default: 5000,
    validator: atLeast(1),
    doc: 'How often the kafka and file signal channels are read, in milliseconds.',
    group: 'Signals',
  }),
  define({
    name: 'signal.kafka.topic',
    type: 'string',
    default: null,
    defaultDoc: '<topic.prefix>-signal',
    doc:
      'The topic of the kafka signal channel; only its partition 0 is read, so it should ' +
      'have one. Records whose key is not topic.prefix are ignored, as Debezium ignores them.',
    group: 'Signals',
  }),
  define({
    name: 'signal.kafka.groupId',
    type: 'string',
    default: 'kafka-signal',
    validator: nonEmpty,
    doc:
      'The consumer group the kafka signal channel commits its position to (without ' +
      'joining it); its committed offset is where a connector without a stored position starts.',
    group: 'Signals',
  }),
  define({
    name: 'signal.kafka.bootstrap.servers',
    type: 'string',
    default: null,
    defaultDoc: "the worker's bootstrap.servers",
    doc: 'host:port pairs of the Kafka cluster that holds signal.kafka.topic.',
    group: 'Signals',
  }),
  define({
    name: 'signal.kafka.poll.timeout.ms',
    type: 'int',
    default: 100,
    validator: atLeast(0),
    doc: 'How long each read of the signal topic waits for a signal, in milliseconds.',
    group: 'Signals',
  }),
  define({
    name: 'signal.file',
    type: 'string',
    default: 'file-signals.txt',
    validator: nonEmpty,
    doc:
      'The file of the file signal channel: one JSON signal {"id","type","data"} a line. ' +
      'The file is emptied once its lines are read, as Debezium does.',
    group: 'Signals',
  }),
];

export interface KafkaChannelSettings {
  topic: string;
  groupId: string;
  /** null: the worker's bootstrap.servers. */
  bootstrapServers: string | null;
  pollTimeoutMs: number;
  clientId: string | null;
  autoOffsetReset: 'earliest' | 'latest' | 'none';
  maxPartitionFetchBytes: number | null;
  requestTimeoutMs: number | null;
}

export interface SignalChannelSettings {
  enabled: ReadonlySet<SignalChannel>;
  pollIntervalMs: number;
  kafka: KafkaChannelSettings;
  file: string;
}

/** Typed settings from values parsed by signalChannelConfigDefs (errors already refused). */
export function readSignalChannels(
  v: Readonly<Record<string, unknown>>,
  topicPrefix: string,
): SignalChannelSettings {
  const consumer = (k: string) => {
    const value = v[`${CONSUMER_PREFIX}${k}`];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
  };
  const number = (k: string) => (consumer(k) === null ? null : Number(consumer(k)));
  return {
    enabled: new Set(
      (v['signal.enabled.channels'] as string[]).map((c) => c.toLowerCase() as SignalChannel),
    ),
    pollIntervalMs: v['signal.poll.interval.ms'] as number,
    kafka: {
      topic: (v['signal.kafka.topic'] as string | null) || `${topicPrefix}-signal`,
      // signal.consumer.* wins over signal.kafka.*, as in Debezium's withDefault chain.
      groupId: consumer('group.id') ?? (v['signal.kafka.groupId'] as string),
      bootstrapServers:
        consumer('bootstrap.servers') ??
        ((v['signal.kafka.bootstrap.servers'] as string | null) || null),
      pollTimeoutMs: v['signal.kafka.poll.timeout.ms'] as number,
      clientId: consumer('client.id'),
      autoOffsetReset: (consumer('auto.offset.reset')?.toLowerCase() ?? 'earliest') as
        | 'earliest'
        | 'latest'
        | 'none',
      maxPartitionFetchBytes: number('max.partition.fetch.bytes'),
      requestTimeoutMs: number('request.timeout.ms'),
    },
    file: v['signal.file'] as string,
  };
}

/** The combinations and signal.consumer.* keys the channels cannot run with. */
export function signalChannelErrors(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const [key, value] of Object.entries(v)) {
    if (!key.startsWith(CONSUMER_PREFIX)) continue;
    const property = key.slice(CONSUMER_PREFIX.length);
    const allowed = CONSUMER_KEYS[property];
    const text = String(value ?? '').trim();
    if (allowed === undefined) {
      errors.push({
        key,
        value,
        message: `not supported: ${key}; the signal topic reader implements only the consumer properties ${Object.keys(CONSUMER_KEYS).join(', ')}`,
      });
    } else if (
      allowed !== null &&
      !allowed.includes(text.toLowerCase()) &&
      !allowed.includes(text)
    ) {
      errors.push({
        key,
        value,
        message: `not supported: ${key}=${text}; the signal topic reader supports ${allowed.join(', ')}`,
      });
    } else if (NUMERIC_CONSUMER_KEYS.has(property) && !(Number(text) > 0)) {
      errors.push({ key, value, message: 'must be a positive number' });
    }
  }
  const channels = ((v['signal.enabled.channels'] as string[] | undefined) ?? []).map((c) =>
    c.toLowerCase(),
  );
  const external = channels.filter((c) => c === 'kafka' || c === 'file');
  if (external.length > 0 && !v['signal.data.collection']) {
    errors.push({
      key: 'signal.enabled.channels',
      value: v['signal.enabled.channels'],
      message: `signal.enabled.channels names ${external.join(' and ')}, which need${external.length > 1 ? '' : 's'} signal.data.collection: the incremental snapshots their signals start write their watermarks into that table`,
    });
  }
  return errors;
}
