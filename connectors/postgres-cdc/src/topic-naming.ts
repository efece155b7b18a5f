/**
 * Topic names, as Debezium's topic naming strategies make them (topic.naming.strategy,
 * io.debezium.schema.AbstractTopicNamingStrategy and its two subclasses named here):
 *
 *   data change   SchemaTopicNamingStrategy (Debezium's default for Postgres):
 *                   <topic.prefix><d><schema><d><table>
 *                 DefaultTopicNamingStrategy: the prefix and the table id's database
 *                   parts, catalog and table. A Postgres table id has no catalog, so:
 *                   <topic.prefix><d><table>   (tables of two schemas share a topic)
 *   heartbeat     <topic.heartbeat.prefix><d><topic.prefix>
 *   transaction   <topic.prefix><d><topic.transaction>
 * where <d> is topic.delimiter ("."). Only data change topics are sanitized, as in
 * Debezium: every character Kafka refuses in a topic name (outside [a-zA-Z0-9._-])
 * becomes "_", a name longer than 249 characters is cut there, and "." and ".." become
 * "_" and "__"; the other parts are validated at configuration time (naming-config.ts).
 * The logical decoding message topic is no strategy's: Debezium names it
 * <topic.prefix>.message whatever the strategy and delimiter (logical-decoding-message.ts).
 *
 * topic.cache.size bounds how many table → topic names are remembered (least recently
 * used go first), as Debezium's bounded map does; a name is the same whether it was
 * remembered or made again, so the size only trades memory for a little work.
 */
import type { TableId } from './table-filter.ts';

export const SCHEMA_TOPIC_NAMING_STRATEGY = 'io.debezium.schema.SchemaTopicNamingStrategy';
export const DEFAULT_TOPIC_NAMING_STRATEGY = 'io.debezium.schema.DefaultTopicNamingStrategy';
export const TOPIC_NAMING_STRATEGIES = [
  SCHEMA_TOPIC_NAMING_STRATEGY,
  DEFAULT_TOPIC_NAMING_STRATEGY,
] as const;
export type TopicNamingStrategy = (typeof TOPIC_NAMING_STRATEGIES)[number];

/** Kafka's limit on a topic name's length (org.apache.kafka.common.internals.Topic). */
const MAX_TOPIC_NAME_LENGTH = 249;

export interface TopicNamingSettings {
  prefix: string;
  strategy: TopicNamingStrategy;
  delimiter: string;
  heartbeatPrefix: string;
  transaction: string;
  cacheSize: number;
}

export const TOPIC_NAMING_DEFAULTS: Omit<TopicNamingSettings, 'prefix'> = {
  strategy: SCHEMA_TOPIC_NAMING_STRATEGY,
  delimiter: '.',
  heartbeatPrefix: '__debezium-heartbeat',
  transaction: 'transaction',
  cacheSize: 10_000,
};

/** A topic name with every character Kafka refuses replaced, as Debezium sanitizes it. */
export function sanitizedTopicName(name: string): string {
  let out = name.replace(/[^A-Za-z0-9._-]/g, '_');
  if (out.length > MAX_TOPIC_NAME_LENGTH) out = out.slice(0, MAX_TOPIC_NAME_LENGTH);
  else if (out === '.') out = '_';
  else if (out === '..') out = '__';
  return out;
}

export class TopicNaming {
  private readonly topics = new Map<string, string>();

  /** Hears of each table whose topic had to be changed (the task logs a warning, as Debezium does). */
  onSanitized?: (proposed: string, topic: string) => void;

  constructor(private readonly s: TopicNamingSettings) {}

  get prefix(): string {
    return this.s.prefix;
  }

  dataChangeTopic(id: TableId): string {
    const key = `${id.schema}\u0000${id.table}`;
    const known = this.topics.get(key);
    if (known !== undefined) {
      // Refresh its place: the map's order is least recently used first.
      this.topics.delete(key);
      this.topics.set(key, known);
      return known;
    }
    const parts =
      this.s.strategy === DEFAULT_TOPIC_NAMING_STRATEGY
        ? [this.s.prefix, id.table]
        : [this.s.prefix, id.schema, id.table];
    // Debezium leaves out blank parts (mkString).
    const proposed = parts.filter((p) => p.trim() !== '').join(this.s.delimiter);
    const topic = sanitizedTopicName(proposed);
    if (topic !== proposed) this.onSanitized?.(proposed, topic);
    this.topics.set(key, topic);
    if (this.topics.size > Math.max(1, this.s.cacheSize)) {
      const oldest = this.topics.keys().next().value as string;
      this.topics.delete(oldest);
    }
    return topic;
  }

  heartbeatTopic(): string {
    return [this.s.heartbeatPrefix, this.s.prefix].join(this.s.delimiter);
  }

  transactionTopic(): string {
    return [this.s.prefix, this.s.transaction].join(this.s.delimiter);
  }
}
