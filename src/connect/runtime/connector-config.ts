/**
 * The keys every connector config may carry, whatever its plugin: Kafka Connect's
 * ConnectorConfig, SourceConnectorConfig and SinkConnectorConfig, with Kafka's names,
 * defaults and groups, so configs written for Kafka Connect validate unchanged.
 *
 * Some keys only exist once others name them ("enrichment", as Kafka Connect calls it):
 * each alias in `transforms` adds `transforms.<alias>.type`, `.predicate`, `.negate`
 * and the transform's own keys under that prefix; each alias in `predicates` adds
 * `predicates.<alias>.type` and the predicate's keys; each group in
 * `topic.creation.groups` (plus `default`) adds the KIP-158 `topic.creation.<group>.*`
 * keys. `enrichedConnectorDefs` builds that full list from a raw config.
 *
 * Departures from Kafka's defaults are said in the key's doc (replication factors
 * default to -1, the broker's default, as the worker's do).
 */
import {
  type AnyConfigDef,
  atLeast,
  define,
  oneOf,
  type Validator,
} from '../../config/config-def.ts';
import type { PluginType } from '../api/plugin-manifest.ts';
import { isSimpleHeaderConverter } from './header-converter.ts';
import type { PluginRegistry } from './plugins.ts';

export const COMMON_GROUP = 'Common';
export const TRANSFORMS_GROUP = 'Transforms';
export const PREDICATES_GROUP = 'Predicates';
export const ERROR_GROUP = 'Error Handling';
export const TOPIC_CREATION_GROUP = 'Topic Creation';
export const EXACTLY_ONCE_GROUP = 'Exactly Once Support';
export const OFFSETS_TOPIC_GROUP = 'offsets.topic';

/** Kafka Connect's NonEmptyStringWithoutControlChars, for connector names. */
const connectorName: Validator<string> = (v) => {
  if (v.length === 0) return 'String may not be empty';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we look for
  const control = v.match(/[\u0000-\u001f\u007f]/g);
  return control === null
    ? undefined
    : `String may not contain control sequences but had the following ASCII control characters: ${control
        .map((c) => c.charCodeAt(0))
        .join(', ')}`;
};

const uniqueAliases: Validator<string[]> = (v) =>
  new Set(v).size === v.length ? undefined : 'Duplicate alias provided.';

/** A validator accepting class names that resolve to a plugin of one of `types`. */
export function pluginClass(
  plugins: PluginRegistry,
  noun: string,
  ...types: PluginType[]
): Validator<string> {
  return (v) => {
    const desc = plugins.find(v);
    if (desc === undefined) return `Class ${v} could not be found.`;
    return types.includes(desc.manifest.type) ? undefined : `Class ${v} is not a ${noun}.`;
  };
}

/** Keys of every connector, source or sink. */
export function commonConnectorDefs(plugins: PluginRegistry): AnyConfigDef[] {
  const converter = pluginClass(plugins, 'Converter', 'converter');
  return [
    define<string>({
      name: 'name',
      type: 'string',
      validator: connectorName,
      importance: 'high',
      group: COMMON_GROUP,
      doc: 'Globally unique name to use for this connector.',
    }),
    define<string>({
      name: 'connector.class',
      type: 'string',
      validator: pluginClass(plugins, 'Connector', 'source', 'sink'),
      importance: 'high',
      group: COMMON_GROUP,
      doc: 'Name or alias of the connector class, e.g. FileStreamSink or org.apache.kafka.connect.file.FileStreamSinkConnector.',
    }),
    define<number>({
      name: 'tasks.max',
      type: 'int',
      default: 1,
      validator: atLeast(1),
      importance: 'high',
      group: COMMON_GROUP,
      doc: 'Maximum number of tasks to use for this connector.',
    }),
    define<boolean>({
      name: 'tasks.max.enforce',
      type: 'boolean',
      default: true,
      importance: 'low',
      group: COMMON_GROUP,
      doc: 'Fail the connector when it generates more task configs than tasks.max allows.',
    }),
    define<string>({
      name: 'key.converter',
      type: 'class',
      default: null,
      validator: converter,
      importance: 'low',
      group: COMMON_GROUP,
      defaultDoc: "the worker's key.converter",
      doc: 'Converter between record keys and bytes in Kafka for this connector (key.converter.* configures it).',
    }),
    define<string>({
      name: 'value.converter',
      type: 'class',
      default: null,
      validator: converter,
      importance: 'low',
      group: COMMON_GROUP,
      defaultDoc: "the worker's value.converter",
      doc: 'Converter between record values and bytes in Kafka for this connector (value.converter.* configures it).',
    }),
    define<string>({
      name: 'header.converter',
      type: 'class',
      default: null,
      // Kafka's SimpleHeaderConverter is built into the runtime, not a plugin.
      validator: (v, key) => (isSimpleHeaderConverter(v) ? undefined : converter(v, key)),
      importance: 'low',
      group: COMMON_GROUP,
      defaultDoc: "the worker's header.converter",
      doc: 'Converter between record header values and bytes for this connector.',
    }),
    define<string>({
      name: 'config.action.reload',
      type: 'string',
      default: 'restart',
      validator: (v) => oneOf('none', 'restart')(v.toLowerCase(), 'config.action.reload'),
      importance: 'low',
      group: COMMON_GROUP,
      doc: 'What to do when a config provider reports changed values: restart the connector or nothing.',
    }),
    define<string[]>({
      name: 'transforms',
      type: 'list',
      default: [],
      validator: uniqueAliases,
      importance: 'low',
      group: TRANSFORMS_GROUP,
      doc: 'Aliases of the transformations to apply to records, in order.',
    }),
    define<string[]>({
      name: 'predicates',
      type: 'list',
      default: [],
      validator: uniqueAliases,
      importance: 'low',
      group: PREDICATES_GROUP,
      doc: 'Aliases of the predicates transformations may be guarded by.',
    }),
    define<number>({
      name: 'errors.retry.timeout',
      type: 'long',
      default: 0,
      validator: atLeast(-1),
      importance: 'medium',
      group: ERROR_GROUP,
      doc: 'How long a failed operation is retried, in ms; 0 means no retries, -1 retries forever.',
    }),
    define<number>({
      name: 'errors.retry.delay.max.ms',
      type: 'long',
      default: 60000,
      validator: atLeast(1),
      importance: 'medium',
      group: ERROR_GROUP,
      doc: 'Upper bound of the back-off between retries of a failed operation, in ms.',
    }),
    define<string>({
      name: 'errors.tolerance',
      type: 'string',
      default: 'none',
      validator: (v) => oneOf('none', 'all')(v.toLowerCase(), 'errors.tolerance'),
      importance: 'medium',
      group: ERROR_GROUP,
      doc: "'none' fails the task on a bad record; 'all' skips bad records.",
    }),
    define<boolean>({
      name: 'errors.log.enable',
      type: 'boolean',
      default: false,
      importance: 'medium',
      group: ERROR_GROUP,
      doc: 'Log each failed operation and problem record (with errors.tolerance=all).',
    }),
    define<boolean>({
      name: 'errors.log.include.messages',
      type: 'boolean',
      default: false,
      importance: 'medium',
      group: ERROR_GROUP,
      doc: 'Include the failed record (topic, partition, offset, timestamp) in the error log.',
    }),
  ];
}

/** Keys only sink connectors have. */
export const sinkOnlyDefs: readonly AnyConfigDef[] = [
  define<string[]>({
    name: 'topics',
    type: 'list',
    default: [],
    importance: 'high',
    group: COMMON_GROUP,
    doc: 'Topics to consume; exactly one of topics and topics.regex must be set.',
  }),
  define<string>({
    name: 'topics.regex',
    type: 'string',
    default: '',
    validator: (v) => {
      try {
        new RegExp(v);
        return undefined;
      } catch (e) {
        return `Invalid regular expression: ${(e as Error).message}`;
      }
    },
    importance: 'high',
    group: COMMON_GROUP,
    doc: 'Regular expression of topics to consume; exactly one of topics and topics.regex must be set.',
  }),
  define<string>({
    name: 'errors.deadletterqueue.topic.name',
    type: 'string',
    default: '',
    importance: 'medium',
    group: ERROR_GROUP,
    doc: 'Topic that records failing conversion or transformation are written to; empty disables it.',
  }),
  define<number>({
    name: 'errors.deadletterqueue.topic.replication.factor',
    type: 'int',
    default: -1,
    validator: (v) => (v === -1 || v >= 1 ? undefined : 'must be -1 or at least 1'),
    importance: 'medium',
    group: ERROR_GROUP,
    doc: "Replication factor of the dead letter queue topic if created; Kafka's default is 3, ours -1 (the broker's default).",
  }),
  define<boolean>({
    name: 'errors.deadletterqueue.context.headers.enable',
    type: 'boolean',
    default: false,
    importance: 'medium',
    group: ERROR_GROUP,
    doc: 'Add __connect.errors.* headers describing the failure to dead letter queue records.',
  }),
];

/** Keys only source connectors have (topic creation keys come from enrichment). */
export const sourceOnlyDefs: readonly AnyConfigDef[] = [
  define<string[]>({
    name: 'topic.creation.groups',
    type: 'list',
    default: [],
    importance: 'low',
    group: TOPIC_CREATION_GROUP,
    doc: 'Groups of topic.creation.<group>.* settings for topics this connector creates, besides default.',
  }),
  define<string>({
    name: 'exactly.once.support',
    type: 'string',
    default: 'requested',
    validator: (v) => oneOf('requested', 'required')(v.toLowerCase(), 'exactly.once.support'),
    importance: 'medium',
    group: EXACTLY_ONCE_GROUP,
    doc: "'required' refuses to start unless the connector declares exactly-once support.",
  }),
  define<string>({
    name: 'transaction.boundary',
    type: 'string',
    default: 'poll',
    validator: (v) =>
      oneOf('poll', 'interval', 'connector')(v.toLowerCase(), 'transaction.boundary'),
    importance: 'medium',
    group: EXACTLY_ONCE_GROUP,
    doc: 'Where exactly-once source transactions end: each poll, each interval, or where the connector says.',
  }),
  define<number>({
    name: 'transaction.boundary.interval.ms',
    type: 'long',
    default: null,
    validator: atLeast(0),
    importance: 'low',
    group: EXACTLY_ONCE_GROUP,
    doc: 'With transaction.boundary=interval, how often transactions are committed.',
  }),
  define<string>({
    name: 'offsets.storage.topic',
    type: 'string',
    default: null,
    // Kafka's NonEmptyString. Standalone mode refuses the key (exactly-once.ts).
    validator: (v) => (v === '' ? 'String must be non-empty' : undefined),
    importance: 'low',
    group: OFFSETS_TOPIC_GROUP,
    doc: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker's global offsets topic name will be used. If specified, the offsets topic is created if it does not already exist, like the worker's (offset.storage.partitions, offset.storage.replication.factor, compacted); offsets are committed to it (in the task's transactions under exactly-once) and copied to the worker's topic, which reads fall back to. Distributed mode only: refused in standalone mode.",
  }),
];

const replicationOrPartitions: Validator<number> = (v) =>
  v === -1 || v >= 1 ? undefined : 'Value must be -1 or at least 1';

/** KIP-158 keys of one topic creation group. */
function topicCreationGroupDefs(group: string): AnyConfigDef[] {
  const prefix = `topic.creation.${group}.`;
  const groupName = `${TOPIC_CREATION_GROUP}: ${group}`;
  const isDefault = group === 'default';
  return [
    define<string[]>({
      name: `${prefix}include`,
      type: 'list',
      default: isDefault ? ['.*'] : [],
      importance: 'low',
      group: groupName,
      doc: 'Regular expressions of the topics this group applies to.',
    }),
    define<string[]>({
      name: `${prefix}exclude`,
      type: 'list',
      default: [],
      importance: 'low',
      group: groupName,
      doc: 'Regular expressions of the topics this group does not apply to.',
    }),
    define<number>({
      name: `${prefix}replication.factor`,
      type: 'int',
      // The default group must say how to create topics; others inherit from it.
      ...(isDefault ? {} : { default: null }),
      validator: replicationOrPartitions,
      importance: 'low',
      group: groupName,
      doc: 'Replication factor of new topics in this group; -1 uses the broker default.',
    }),
    define<number>({
      name: `${prefix}partitions`,
      type: 'int',
      ...(isDefault ? {} : { default: null }),
      validator: replicationOrPartitions,
      importance: 'low',
      group: groupName,
      doc: 'Partition count of new topics in this group; -1 uses the broker default.',
    }),
  ];
}

/** A list value of a raw config, split as the list type does. */
export function rawList(raw: Readonly<Record<string, unknown>>, key: string): string[] {
  const v = raw[key];
  if (typeof v !== 'string') return Array.isArray(v) ? v.map(String) : [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Copy definitions under a key prefix and a group, as enrichment shows plugin keys. */
export function prefixedDefs(
  defs: readonly AnyConfigDef[],
  prefix: string,
  group?: string,
): AnyConfigDef[] {
  return defs.map((d) => ({ ...d, name: `${prefix}${d.name}`, group: group ?? d.group }));
}

/**
 * Every key this raw config may carry, in Kafka Connect's order: common keys, the
 * type's own keys, then per transform alias, per predicate alias and per topic
 * creation group (when any topic.creation.* key is set). The connector plugin's own
 * keys are not included: config-validation.ts adds them.
 */
export function enrichedConnectorDefs(
  plugins: PluginRegistry,
  type: 'source' | 'sink',
  raw: Readonly<Record<string, unknown>>,
): AnyConfigDef[] {
  const defs = [
    ...commonConnectorDefs(plugins),
    ...(type === 'sink' ? sinkOnlyDefs : sourceOnlyDefs),
  ];
  const predicateAliases = [...new Set(rawList(raw, 'predicates'))];
  for (const alias of new Set(rawList(raw, 'transforms'))) {
    const prefix = `transforms.${alias}.`;
    const group = `${TRANSFORMS_GROUP}: ${alias}`;
    defs.push(
      define<string>({
        name: `${prefix}type`,
        type: 'class',
        validator: pluginClass(plugins, 'Transformation', 'transformation'),
        importance: 'high',
        group,
        doc: 'Class for the transformation.',
      }),
      define<string>({
        name: `${prefix}predicate`,
        type: 'string',
        default: null,
        validator: (v) =>
          v === '' || predicateAliases.includes(v)
            ? undefined
            : `Predicate alias ${v} is not in the predicates list`,
        importance: 'medium',
        group,
        doc: 'Alias of a predicate guarding this transformation.',
      }),
      define<boolean>({
        name: `${prefix}negate`,
        type: 'boolean',
        default: false,
        importance: 'medium',
        group,
        doc: 'Apply the transformation when the predicate does not match.',
      }),
    );
    const manifest = transformTypeOf(plugins, raw, prefix, 'transformation');
    if (manifest !== undefined) defs.push(...prefixedDefs(manifest.configDefs, prefix, group));
  }
  for (const alias of predicateAliases) {
    const prefix = `predicates.${alias}.`;
    const group = `${PREDICATES_GROUP}: ${alias}`;
    defs.push(
      define<string>({
        name: `${prefix}type`,
        type: 'class',
        validator: pluginClass(plugins, 'Predicate', 'predicate'),
        importance: 'high',
        group,
        doc: 'Class for the predicate.',
      }),
    );
    const manifest = transformTypeOf(plugins, raw, prefix, 'predicate');
    if (manifest !== undefined) defs.push(...prefixedDefs(manifest.configDefs, prefix, group));
  }
  if (type === 'source' && Object.keys(raw).some((k) => k.startsWith('topic.creation.'))) {
    const groups = [
      'default',
      ...rawList(raw, 'topic.creation.groups').filter((g) => g !== 'default'),
    ];
    for (const group of new Set(groups)) defs.push(...topicCreationGroupDefs(group));
  }
  return defs;
}

function transformTypeOf(
  plugins: PluginRegistry,
  raw: Readonly<Record<string, unknown>>,
  prefix: string,
  type: 'transformation' | 'predicate',
) {
  const cls = raw[`${prefix}type`];
  return typeof cls === 'string' ? plugins.findOfType(cls, type) : undefined;
}
