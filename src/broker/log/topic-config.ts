/**
 * Topic-level configs, with Kafka's names, defaults and broker-level fallbacks.
 *
 * Each topic key has a broker key (`segment.bytes` <- `log.segment.bytes`) whose value
 * is the default for topics that do not set it, exactly as in Kafka. This table is the
 * one source for both: the broker's config definitions include `brokerLogDefaultDefs`,
 * CreateTopics/AlterConfigs validate against `topicConfigDefs`, and DescribeConfigs
 * reports where a value came from.
 */
import {
  type AnyConfigDef,
  atLeast,
  between,
  define,
  eachOneOf,
  oneOf,
} from '../../config/config-def.ts';

/** Java's Long.MAX_VALUE as Kafka shows it, for "never"; parsed to 2^53-1 here. */
export const NEVER = Number.MAX_SAFE_INTEGER;

interface TopicConfigEntry {
  def: AnyConfigDef;
  /** The broker-level key that supplies the default. */
  brokerKey: string;
}

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
];

export const topicConfigDefs: readonly AnyConfigDef[] = entries.map((e) => e.def);

/** The broker-level `log.*` keys: same type, default, validator and doc, other name. */
export const brokerLogDefaultDefs: readonly AnyConfigDef[] = entries.map((e) => ({
  ...e.def,
  name: e.brokerKey,
  group: 'Topic defaults',
}));

/** topic key -> broker key supplying its default. */
export const brokerKeyForTopicKey: ReadonlyMap<string, string> = new Map(
  entries.map((e) => [e.def.name, e.brokerKey]),
);

export interface TopicConfig {
  cleanupPolicy: { delete: boolean; compact: boolean };
  retentionMs: number;
  retentionBytes: number;
  segmentBytes: number;
  segmentMs: number;
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
    const brokerKey = brokerKeyForTopicKey.get(topicKey)!;
    if (brokerValues[brokerKey] !== undefined) return brokerValues[brokerKey] as T;
    return entries.find((e) => e.def.name === topicKey)!.def.default as T;
  };
  const policy = get<string[]>('cleanup.policy');
  return {
    cleanupPolicy: { delete: policy.includes('delete'), compact: policy.includes('compact') },
    retentionMs: get('retention.ms'),
    retentionBytes: get('retention.bytes'),
    segmentBytes: get('segment.bytes'),
    segmentMs: get('segment.ms'),
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
  };
}
