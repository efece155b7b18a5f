/**
 * The keys that name what the connector writes, with Debezium's defaults: topics
 * (topic.naming.strategy, topic.delimiter, topic.heartbeat.prefix, topic.cache.size;
 * topic.prefix and topic.transaction are defined in connector-config.ts), Connect
 * schema and field names (schema.name.adjustment.mode, field.name.adjustment.mode).
 * `readEventNames` turns them into the one EventNames a task uses for every table
 * schema it builds, in the snapshot and the stream alike (it travels in MappingModes,
 * table-schema.ts), and for its heartbeat and transaction topics.
 *
 * Debezium's own defaults (CommonConnectorConfig 2.x): SchemaTopicNamingStrategy,
 * "." , __debezium-heartbeat, 10000, and none for both adjustment modes. Debezium
 * switches field.name.adjustment.mode=none to avro when key.converter or
 * value.converter is an Avro converter; this runtime has no Avro converter, so that
 * case cannot arise here. Debezium 1.x's heartbeat.topics.prefix is no longer read by
 * Debezium 2.x: unsupported-keys.ts refuses any value other than its default.
 */
import { atLeast, define, type Validator } from '../../../src/connect/api/index.ts';
import {
  adjustFieldName,
  NAME_ADJUSTMENT_MODES,
  type NameAdjustmentMode,
  SchemaNameAdjuster,
} from './name-adjustment.ts';
import {
  TOPIC_NAMING_DEFAULTS,
  TOPIC_NAMING_STRATEGIES,
  TopicNaming,
  type TopicNamingStrategy,
} from './topic-naming.ts';

/** How a task names topics, schemas and fields (one per task: it remembers what it named). */
export interface EventNames {
  topics: TopicNaming;
  schemas: SchemaNameAdjuster;
  fieldMode: NameAdjustmentMode;
}

/** The names of topic.naming.strategy's values, for messages. */
const STRATEGIES = TOPIC_NAMING_STRATEGIES.join(', ');

/** Debezium validates these parts with validateTopicName: the characters Kafka allows. */
const topicNamePart: Validator<string> = (v) =>
  /^[A-Za-z0-9._-]+$/.test(v) ? undefined : 'may contain only letters, digits, ".", "_" and "-"';

const adjustmentMode: Validator<string> = (v) =>
  (NAME_ADJUSTMENT_MODES as readonly string[]).includes(v.toLowerCase())
    ? undefined
    : `must be one of ${NAME_ADJUSTMENT_MODES.join(', ')}`;

export const namingConfigDefs = [
  define({
    name: 'topic.naming.strategy',
    type: 'string',
    default: TOPIC_NAMING_DEFAULTS.strategy,
    validator: (v) =>
      (TOPIC_NAMING_STRATEGIES as readonly string[]).includes(v)
        ? undefined
        : `not supported: ${v} is a Java class this connector cannot load; use one of ${STRATEGIES}`,
    doc:
      'How data change topics are named: io.debezium.schema.SchemaTopicNamingStrategy ' +
      '<topic.prefix>.<schema>.<table> (the default), or io.debezium.schema.DefaultTopicNamingStrategy ' +
      '<topic.prefix>.<table> (a Postgres table id has no catalog). Characters Kafka refuses become "_".',
    group: 'Events',
  }),
  define({
    name: 'topic.delimiter',
    type: 'string',
    default: TOPIC_NAMING_DEFAULTS.delimiter,
    validator: topicNamePart,
    doc: 'What joins the parts of data change, heartbeat and transaction topic names.',
    group: 'Events',
  }),
  define({
    name: 'topic.heartbeat.prefix',
    type: 'string',
    default: TOPIC_NAMING_DEFAULTS.heartbeatPrefix,
    validator: topicNamePart,
    doc: 'Heartbeat records go to <topic.heartbeat.prefix><topic.delimiter><topic.prefix>.',
    group: 'Events',
  }),
  define({
    name: 'topic.cache.size',
    type: 'int',
    default: TOPIC_NAMING_DEFAULTS.cacheSize,
    validator: atLeast(1),
    doc:
      'How many table → topic names are remembered (least recently used forgotten first); ' +
      'names are the same either way, the size only bounds memory.',
    group: 'Events',
  }),
  define({
    name: 'schema.name.adjustment.mode',
    type: 'string',
    default: 'none',
    validator: adjustmentMode,
    doc:
      'How Connect schema names (<topic>.Key, .Value, .Envelope) are made valid Avro names: none, ' +
      'avro (invalid characters become "_") or avro_unicode (they become _uXXXX).',
    group: 'Events',
  }),
  define({
    name: 'field.name.adjustment.mode',
    type: 'string',
    default: 'none',
    validator: adjustmentMode,
    doc:
      'How column names become field names of the key and value structs: none, avro (invalid ' +
      'characters become "_") or avro_unicode (they become _uXXXX).',
    group: 'Events',
  }),
];

/** The task's EventNames from parsed values (topic.prefix and topic.transaction included). */
export function readEventNames(v: Readonly<Record<string, unknown>>): EventNames {
  const s = (k: string) => v[k] as string;
  return {
    topics: new TopicNaming({
      prefix: s('topic.prefix'),
      strategy: s('topic.naming.strategy') as TopicNamingStrategy,
      delimiter: s('topic.delimiter'),
      heartbeatPrefix: s('topic.heartbeat.prefix'),
      transaction: s('topic.transaction'),
      cacheSize: v['topic.cache.size'] as number,
    }),
    schemas: new SchemaNameAdjuster(
      s('schema.name.adjustment.mode').toLowerCase() as NameAdjustmentMode,
    ),
    fieldMode: s('field.name.adjustment.mode').toLowerCase() as NameAdjustmentMode,
  };
}

/** A column's field name under the names' field.name.adjustment.mode. */
export function fieldNameOf(names: EventNames | undefined, column: string): string {
  return names === undefined ? column : adjustFieldName(names.fieldMode, column);
}
