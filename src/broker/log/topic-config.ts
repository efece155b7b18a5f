/**
 * Topic-level configs, with Kafka's names, defaults and broker-level fallbacks.
 *
 * Each topic key has a broker key (`segment.bytes` <- `log.segment.bytes`) whose value
 * is the default for topics that do not set it, exactly as in Kafka. This table is the
 * one source for both: the broker's config definitions include `brokerLogDefaultDefs`,
 * CreateTopics/AlterConfigs validate against `topicConfigDefs`, and DescribeConfigs
 * reports where a value came from.
 *
 * Every topic config Kafka 3.x/4.0 defines is here. Each is honoured, or has no meaning
 * on one node and says so in its doc (unclean.leader.election.enable, the replication
 * throttles, message.format.version as Kafka 3.x ignores it), or takes only the value
 * this broker serves and refuses the others by name (tiered storage's keys).
 */
import {
  type AnyConfigDef,
  atLeast,
  between,
  define,
  eachOneOf,
  oneOf,
} from '../../config/config-def.ts';
import { CompressionCodec } from '../../protocol/compression.ts';

/** Java's Long.MAX_VALUE as Kafka shows it, for "never"; parsed to 2^53-1 here. */
export const NEVER = Number.MAX_SAFE_INTEGER;

interface TopicConfigEntry {
  def: AnyConfigDef;
  /** The broker-level key that supplies the default; none for keys Kafka has no broker synonym for. */
  brokerKey?: string;
}

/**
 * Refuses every value but `allowed`: for keys Kafka defines whose other values need
 * what a single node without tiered storage does not have. The text says what to do.
 */
function only<T>(allowed: T, instead: string) {
  return (v: T, key: string): string | undefined =>
    v === allowed ? undefined : `not supported: ${key}=${String(v)}; ${instead}`;
}

const NO_TIERED_STORAGE =
  'this broker has no tiered storage: every segment stays in its local log, kept by retention.ms and retention.bytes';

/** Kafka's ThrottledReplicaListValidator: `*`, or `partition:brokerId` entries. */
const throttledReplicas = (v: string[]): string | undefined => {
  if (v.length === 1 && v[0] === '*') return undefined;
  const bad = v.filter((e) => !/^\d+:\d+$/.test(e));
  return bad.length === 0
    ? undefined
    : `must be the literal '*' or a list of replicas in the form partitionId:brokerId (got ${bad.join(', ')})`;
};

/** A Kafka release as message.format.version takes it: 0.8.0 ... 3.9, with an -IVn suffix. */
const kafkaVersion = (v: string): string | undefined =>
  /^[0-3]\.\d+(\.\d+)?(-IV\d+)?$/.test(v)
    ? undefined
    : `must be a Kafka version such as 2.8 or 3.0-IV1`;

const entries: TopicConfigEntry[] = [
  {
    brokerKey: 'log.cleanup.policy',
    def: define<string[]>({
      name: 'cleanup.policy',
      type: 'list',
      default: ['delete'],
      validator: eachOneOf('delete', 'compact'),
      doc: '"delete" drops old segments by retention, "compact" keeps the latest record per key, or both.',
    }),
  },
  {
    brokerKey: 'log.retention.ms',
    def: define<number>({
      name: 'retention.ms',
      type: 'long',
      default: 604800000,
      validator: atLeast(-1),
      doc: 'How long a segment is kept before deletion (delete policy); -1 keeps forever.',
    }),
  },
  {
    brokerKey: 'log.retention.bytes',
    def: define<number>({
      name: 'retention.bytes',
      type: 'long',
      default: -1,
      validator: atLeast(-1),
      doc: 'Largest size of a partition before old segments are deleted; -1 means no limit.',
    }),
  },
  {
    brokerKey: 'log.segment.bytes',
    def: define<number>({
      name: 'segment.bytes',
      type: 'int',
      default: 1073741824,
      validator: atLeast(14),
      doc: 'Size at which the active segment is rolled.',
    }),
  },
  {
    brokerKey: 'log.roll.ms',
    def: define<number>({
      name: 'segment.ms',
      type: 'long',
      default: 604800000,
      validator: atLeast(1),
      doc: 'Age at which the active segment is rolled, even if not full.',
    }),
  },
  {
    brokerKey: 'log.index.size.max.bytes',
    def: define<number>({
      name: 'segment.index.bytes',
      type: 'int',
      default: 10485760,
      validator: atLeast(4096),
      doc: "Largest size of a segment's offset and time index; a full index rolls the segment.",
    }),
  },
  {
    brokerKey: 'log.index.interval.bytes',
    def: define<number>({
      name: 'index.interval.bytes',
      type: 'int',
      default: 4096,
      validator: atLeast(0),
      doc: 'Bytes of log between two entries of the sparse offset and time indexes.',
    }),
  },
  {
    brokerKey: 'log.flush.interval.messages',
    def: define<number>({
      name: 'flush.messages',
      type: 'long',
      default: NEVER,
      validator: atLeast(1),
      doc: 'Fsync after this many messages; 1 means fsync before acknowledging acks=-1 produces.',
    }),
  },
  {
    brokerKey: 'log.flush.interval.ms',
    def: define<number>({
      name: 'flush.ms',
      type: 'long',
      default: NEVER,
      validator: atLeast(0),
      doc: 'Fsync when the oldest unflushed message is this old.',
    }),
  },
  {
    brokerKey: 'message.max.bytes',
    def: define<number>({
      name: 'max.message.bytes',
      type: 'int',
      default: 1048588,
      validator: atLeast(0),
      doc: 'Largest record batch the topic accepts, after compression.',
    }),
  },
  {
    brokerKey: 'log.message.timestamp.type',
    def: define<string>({
      name: 'message.timestamp.type',
      type: 'string',
      default: 'CreateTime',
      validator: oneOf('CreateTime', 'LogAppendTime'),
      doc: "CreateTime keeps the producer's timestamps; LogAppendTime stamps batches on append.",
    }),
  },
  {
    brokerKey: 'log.cleaner.min.compaction.lag.ms',
    def: define<number>({
      name: 'min.compaction.lag.ms',
      type: 'long',
      default: 0,
      validator: atLeast(0),
      doc: 'Records younger than this stay uncompacted.',
    }),
  },
  {
    brokerKey: 'log.cleaner.max.compaction.lag.ms',
    def: define<number>({
      name: 'max.compaction.lag.ms',
      type: 'long',
      default: NEVER,
      validator: atLeast(1),
      doc: 'Records older than this are compacted even below the dirty ratio.',
    }),
  },
  {
    brokerKey: 'log.cleaner.delete.retention.ms',
    def: define<number>({
      name: 'delete.retention.ms',
      type: 'long',
      default: 86400000,
      validator: atLeast(0),
      doc: 'How long compaction keeps tombstones, and the commit/abort markers of transactions with no records left, so readers still see them.',
    }),
  },
  {
    brokerKey: 'log.cleaner.min.cleanable.ratio',
    def: define<number>({
      name: 'min.cleanable.dirty.ratio',
      type: 'double',
      default: 0.5,
      validator: between(0, 1),
      doc: 'Share of uncleaned log that triggers compaction.',
    }),
  },
  {
    brokerKey: 'log.segment.delete.delay.ms',
    def: define<number>({
      name: 'file.delete.delay.ms',
      type: 'long',
      default: 60000,
      validator: atLeast(0),
      doc: "How long a deleted segment's files stay on disk for readers still using them.",
    }),
  },
  {
    brokerKey: 'log.message.timestamp.before.max.ms',
    def: define<number>({
      name: 'message.timestamp.before.max.ms',
      type: 'long',
      default: NEVER,
      validator: atLeast(0),
      doc: 'CreateTime topics refuse records whose timestamp is more than this far in the past (INVALID_TIMESTAMP).',
    }),
  },
  {
    brokerKey: 'log.message.timestamp.after.max.ms',
    def: define<number>({
      name: 'message.timestamp.after.max.ms',
      type: 'long',
      default: NEVER,
      validator: atLeast(0),
      doc: 'CreateTime topics refuse records whose timestamp is more than this far in the future (INVALID_TIMESTAMP).',
    }),
  },
  {
    brokerKey: 'log.message.timestamp.difference.max.ms',
    def: define<number>({
      name: 'message.timestamp.difference.max.ms',
      type: 'long',
      default: NEVER,
      validator: atLeast(0),
      doc: 'Deprecated (Kafka 3.6): the bound before.max.ms and after.max.ms take when they are not set.',
    }),
  },
  {
    brokerKey: 'compression.type',
    def: define<string>({
      name: 'compression.type',
      type: 'string',
      default: 'producer',
      validator: (v, key) =>
        oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer')(v, key),
      doc: '"producer" keeps each batch as the producer compressed it; uncompressed, gzip, snappy, lz4 or zstd make the broker re-encode every batch in another codec with that codec (at compression.gzip.level / compression.lz4.level / compression.zstd.level), as Kafka\'s LogValidator does.',
    }),
  },
  {
    brokerKey: 'compression.gzip.level',
    def: define<number>({
      name: 'compression.gzip.level',
      type: 'int',
      default: -1,
      validator: (v) =>
        v === -1 || (v >= 1 && v <= 9)
          ? undefined
          : 'must be -1 (the default level) or between 1 and 9',
      doc: 'gzip level at which the broker re-encodes batches for compression.type=gzip (KIP-390); -1 is zlib\'s default (6). Batches already in gzip, and topics with "producer", keep the producer\'s bytes, as in Kafka.',
    }),
  },
  {
    brokerKey: 'compression.lz4.level',
    def: define<number>({
      name: 'compression.lz4.level',
      type: 'int',
      default: 9,
      validator: between(1, 17),
      doc: "lz4 level at which the broker re-encodes batches for compression.type=lz4 (KIP-390). The default 9 is LZ4's fast mode, as in Kafka (lz4-java's fast compressor); the other levels 1–8 search lz4hc's hash chains as deep as lz4hc does, 10–12 deeper ones (lz4hc's optimal parser is not implemented), 13–17 count as 12. Batches already in lz4, and topics with \"producer\", keep the producer's bytes, as in Kafka.",
    }),
  },
  {
    brokerKey: 'compression.zstd.level',
    def: define<number>({
      name: 'compression.zstd.level',
      type: 'int',
      default: 3,
      validator: between(-131072, 22),
      doc: 'zstd level at which the broker re-encodes batches for compression.type=zstd (KIP-390). Batches already in zstd, and topics with "producer", keep the producer\'s bytes, as in Kafka.',
    }),
  },
  {
    brokerKey: 'min.insync.replicas',
    def: define<number>({
      name: 'min.insync.replicas',
      type: 'int',
      default: 1,
      validator: atLeast(1),
      doc: 'Replicas that must have an acks=all produce; this node is the one replica, so above 1 acks=all is NOT_ENOUGH_REPLICAS.',
    }),
  },
  {
    brokerKey: 'unclean.leader.election.enable',
    def: define<boolean>({
      name: 'unclean.leader.election.enable',
      type: 'boolean',
      default: false,
      doc: 'Whether an out-of-sync replica may become leader; this node is the only replica, so there is never an election.',
    }),
  },
  {
    brokerKey: 'log.roll.jitter.ms',
    def: define<number>({
      name: 'segment.jitter.ms',
      type: 'long',
      default: 0,
      validator: atLeast(0),
      doc: "Largest random time taken off segment.ms for a segment's time-based roll: each segment draws its own in [0, min(segment.jitter.ms, segment.ms)), so partitions created together do not all roll at once.",
    }),
  },
  {
    brokerKey: 'log.preallocate',
    def: define<boolean>({
      name: 'preallocate',
      type: 'boolean',
      default: false,
      doc: "Extend each new segment file to segment.bytes when it is created (a sparse extension, as Kafka's RandomAccessFile.setLength); the file is cut back to its data when the segment rolls or the log closes, and recovery takes a zero-filled tail as the end of the log. Sizes reported (DescribeLogDirs, retention.bytes) count only the data.",
    }),
  },
  {
    brokerKey: 'log.message.format.version',
    def: define<string>({
      name: 'message.format.version',
      type: 'string',
      default: '3.0-IV1',
      validator: kafkaVersion,
      doc: 'Deprecated: accepted and ignored, as Kafka 3.x does with inter.broker.protocol.version 3.0+; batches are always format v2.',
    }),
  },
  {
    def: define<string[]>({
      name: 'leader.replication.throttled.replicas',
      type: 'list',
      default: [],
      validator: throttledReplicas,
      doc: 'Replicas whose replication the leader throttles; a single node replicates nothing, so it has no effect.',
    }),
  },
  {
    def: define<string[]>({
      name: 'follower.replication.throttled.replicas',
      type: 'list',
      default: [],
      validator: throttledReplicas,
      doc: 'Replicas whose replication followers throttle; a single node replicates nothing, so it has no effect.',
    }),
  },
  {
    def: define<boolean>({
      name: 'remote.storage.enable',
      type: 'boolean',
      default: false,
      validator: only(false, NO_TIERED_STORAGE),
      doc: 'Tiered storage (KIP-405) is not served: only false.',
    }),
  },
  {
    def: define<boolean>({
      name: 'remote.log.copy.disable',
      type: 'boolean',
      default: false,
      validator: only(false, NO_TIERED_STORAGE),
      doc: 'Tiered storage (KIP-405) is not served: only false.',
    }),
  },
  {
    def: define<boolean>({
      name: 'remote.log.delete.on.disable',
      type: 'boolean',
      default: false,
      validator: only(false, NO_TIERED_STORAGE),
      doc: 'Tiered storage (KIP-405) is not served: only false.',
    }),
  },
  {
    brokerKey: 'log.local.retention.ms',
    def: define<number>({
      name: 'local.retention.ms',
      type: 'long',
      default: -2,
      validator: only(-2, NO_TIERED_STORAGE),
      doc: 'Tiered storage (KIP-405) is not served: only -2 (the same as retention.ms).',
    }),
  },
  {
    brokerKey: 'log.local.retention.bytes',
    def: define<number>({
      name: 'local.retention.bytes',
      type: 'long',
      default: -2,
      validator: only(-2, NO_TIERED_STORAGE),
      doc: 'Tiered storage (KIP-405) is not served: only -2 (the same as retention.bytes).',
    }),
  },
];

export const topicConfigDefs: readonly AnyConfigDef[] = entries.map((e) => e.def);

/** The broker-level `log.*` keys: same type, default, validator and doc, other name. */
export const brokerLogDefaultDefs: readonly AnyConfigDef[] = entries.flatMap((e) =>
  e.brokerKey === undefined ? [] : [{ ...e.def, name: e.brokerKey, group: 'Topic defaults' }],
);

/** topic key -> broker key supplying its default. */
export const brokerKeyForTopicKey: ReadonlyMap<string, string> = new Map(
  entries.flatMap((e) => (e.brokerKey === undefined ? [] : [[e.def.name, e.brokerKey] as const])),
);

export interface TopicConfig {
  cleanupPolicy: { delete: boolean; compact: boolean };
  retentionMs: number;
  retentionBytes: number;
  segmentBytes: number;
  segmentMs: number;
  /** segment.jitter.ms: the bound of each segment's random share taken off segmentMs. */
  segmentJitterMs: number;
  /** preallocate: new segment files are extended to segmentBytes at creation. */
  preallocate: boolean;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  flushMessages: number;
  flushMs: number;
  maxMessageBytes: number;
  logAppendTime: boolean;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
  deleteRetentionMs: number;
  minCleanableDirtyRatio: number;
  fileDeleteDelayMs: number;
  /** CreateTime bounds on record timestamps, from now (NEVER: no bound). */
  timestampBeforeMaxMs: number;
  timestampAfterMaxMs: number;
  minInsyncReplicas: number;
  /**
   * compression.type: the codec every appended batch is stored in (re-encoded when the
   * producer used another), with its KIP-390 level; undefined for "producer".
   */
  compression: { codec: CompressionCodec; level: number | undefined } | undefined;
}

/** compression.type's value -> the codec and level the broker writes, or undefined for "producer". */
function topicCompression(
  type: string,
  level: (key: string) => number,
): TopicConfig['compression'] {
  switch (type) {
    case 'uncompressed':
      return { codec: CompressionCodec.none, level: undefined };
    case 'gzip':
      return { codec: CompressionCodec.gzip, level: level('compression.gzip.level') };
    case 'snappy':
      return { codec: CompressionCodec.snappy, level: undefined };
    case 'lz4':
      return { codec: CompressionCodec.lz4, level: level('compression.lz4.level') };
    case 'zstd':
      return { codec: CompressionCodec.zstd, level: level('compression.zstd.level') };
    case 'producer':
      return undefined;
    default:
      // Unknown names never get here: the validator refuses them.
      throw new Error(`compression.type=${type} passed validation`);
  }
}

/**
 * The effective config of a topic: its own overrides (already validated against
 * topicConfigDefs) over the broker's `log.*` values (already parsed).
 */
export function effectiveTopicConfig(
  overrides: Record<string, unknown>,
  brokerValues: Record<string, unknown>,
): TopicConfig {
  const get = <T>(topicKey: string): T => {
    if (overrides[topicKey] !== undefined) return overrides[topicKey] as T;
    const brokerKey = brokerKeyForTopicKey.get(topicKey);
    if (brokerKey !== undefined && brokerValues[brokerKey] !== undefined)
      return brokerValues[brokerKey] as T;
    return entries.find((e) => e.def.name === topicKey)!.def.default as T;
  };
  const policy = get<string[]>('cleanup.policy');
  const bound = (key: string): number => {
    const own = get<number>(key);
    return own !== NEVER ? own : get<number>('message.timestamp.difference.max.ms');
  };
  return {
    cleanupPolicy: { delete: policy.includes('delete'), compact: policy.includes('compact') },
    retentionMs: get('retention.ms'),
    retentionBytes: get('retention.bytes'),
    segmentBytes: get('segment.bytes'),
    segmentMs: get('segment.ms'),
    segmentJitterMs: get('segment.jitter.ms'),
    preallocate: get('preallocate'),
    segmentIndexBytes: get('segment.index.bytes'),
    indexIntervalBytes: get('index.interval.bytes'),
    flushMessages: get('flush.messages'),
    flushMs: get('flush.ms'),
    maxMessageBytes: get('max.message.bytes'),
    logAppendTime: get<string>('message.timestamp.type') === 'LogAppendTime',
    minCompactionLagMs: get('min.compaction.lag.ms'),
    maxCompactionLagMs: get('max.compaction.lag.ms'),
    deleteRetentionMs: get('delete.retention.ms'),
    minCleanableDirtyRatio: get('min.cleanable.dirty.ratio'),
    fileDeleteDelayMs: get('file.delete.delay.ms'),
    // Kafka 3.6+: an unset bound falls back to the deprecated difference.max.ms.
    timestampBeforeMaxMs: bound('message.timestamp.before.max.ms'),
    timestampAfterMaxMs: bound('message.timestamp.after.max.ms'),
    minInsyncReplicas: get('min.insync.replicas'),
    compression: topicCompression(get<string>('compression.type'), get<number>),
  };
}
