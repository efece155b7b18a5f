/**
 * The built-in transforms and predicates as plugin manifests. Each answers to its
 * Kafka (or Debezium) class name, including Kafka's `$Key` / `$Value` nested-class
 * names, so connector configs written for Kafka Connect work unchanged.
 */
import { definePlugins, type PluginManifest } from '../api/index.ts';
import {
  ExtractNewRecordState,
  extractNewRecordStateConfigDefs,
} from './extract-new-record-state.ts';
import { InsertField, insertFieldConfigDefs } from './insert-field.ts';
import {
  HasHeaderKey,
  hasHeaderKeyConfigDefs,
  RecordIsTombstone,
  TopicNameMatches,
  topicNameMatchesConfigDefs,
} from './predicates.ts';
import { RegexRouter, regexRouterConfigDefs } from './regex-router.ts';
import { ReplaceField, replaceFieldConfigDefs } from './replace-field.ts';

export type { Predicate, Transformation } from '../api/index.ts';
export {
  ExtractNewRecordState,
  HasHeaderKey,
  InsertField,
  RecordIsTombstone,
  RegexRouter,
  ReplaceField,
  TopicNameMatches,
};

const VERSION = '1.0.0';
const KAFKA = 'org.apache.kafka.connect.transforms';

function keyValue(
  name: string,
  doc: string,
  configDefs: PluginManifest['configDefs'],
  make: (part: 'key' | 'value') => InsertField | ReplaceField,
): PluginManifest[] {
  return (['Key', 'Value'] as const).map((variant) => ({
    type: 'transformation',
    className: `connect.transforms.${name}$${variant}`,
    aliases: [`${KAFKA}.${name}$${variant}`],
    version: VERSION,
    doc: `${doc} (record ${variant.toLowerCase()})`,
    configDefs,
    create: () => make(variant === 'Key' ? 'key' : 'value'),
  }));
}

export const transformPlugins: PluginManifest[] = definePlugins(
  {
    type: 'transformation',
    className: 'connect.transforms.RegexRouter',
    aliases: [`${KAFKA}.RegexRouter`],
    version: VERSION,
    doc: 'Rename topics with a regular expression',
    configDefs: regexRouterConfigDefs,
    create: () => new RegexRouter(),
  },
  ...keyValue(
    'InsertField',
    'Insert topic, partition, offset, timestamp or a static field',
    insertFieldConfigDefs,
    (p) => new InsertField(p),
  ),
  ...keyValue(
    'ReplaceField',
    'Include, exclude and rename fields',
    replaceFieldConfigDefs,
    (p) => new ReplaceField(p),
  ),
  {
    type: 'transformation',
    className: 'connect.transforms.ExtractNewRecordState',
    aliases: ['io.debezium.transforms.ExtractNewRecordState'],
    version: VERSION,
    doc: 'Flatten Debezium change events to the row state',
    configDefs: extractNewRecordStateConfigDefs,
    create: () => new ExtractNewRecordState(),
  },
  {
    type: 'predicate',
    className: 'connect.transforms.predicates.TopicNameMatches',
    aliases: [`${KAFKA}.predicates.TopicNameMatches`],
    version: VERSION,
    doc: 'Topic name matches a regular expression',
    configDefs: topicNameMatchesConfigDefs,
    create: () => new TopicNameMatches(),
  },
  {
    type: 'predicate',
    className: 'connect.transforms.predicates.HasHeaderKey',
    aliases: [`${KAFKA}.predicates.HasHeaderKey`],
    version: VERSION,
    doc: 'Record has a header with the given key',
    configDefs: hasHeaderKeyConfigDefs,
    create: () => new HasHeaderKey(),
  },
  {
    type: 'predicate',
    className: 'connect.transforms.predicates.RecordIsTombstone',
    aliases: [`${KAFKA}.predicates.RecordIsTombstone`],
    version: VERSION,
    doc: 'Record value is null',
    configDefs: [],
    create: () => new RecordIsTombstone(),
  },
);
