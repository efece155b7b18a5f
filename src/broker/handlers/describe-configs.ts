/**
 * DescribeConfigs (key 32) for topics (resource type 2) and this broker (4).
 *
 * Topic entries: every topic config key with its effective value and where it comes
 * from: the topic's own override (TOPIC_CONFIG), the broker's `log.*` key when it is
 * set to something other than Kafka's default (STATIC_BROKER_CONFIG), or the default
 * (DEFAULT_CONFIG); v0 says the last two as isDefault. With includeSynonyms (v1+)
 * each entry lists those sources in precedence order, as Kafka does. Broker entries:
 * every broker key, all static. configurationKeys null means all; unknown names in
 * it are left out. Values are Kafka's text forms (lists comma-joined, "never" as
 * Java's Long.MAX_VALUE).
 */

import { brokerConfigDefs } from '../../config/broker-config.ts';
import type { AnyConfigDef } from '../../config/config-def.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { brokerKeyForTopicKey, NEVER, topicConfigDefs } from '../log/topic-config.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;

/** Kafka's DescribeConfigsResponse ConfigSource values. */
const SOURCE_TOPIC = 1;
const SOURCE_STATIC_BROKER = 4;
const SOURCE_DEFAULT = 5;

/** Kafka's ConfigType values (v3+). */
const CONFIG_TYPE: Record<string, number> = {
  boolean: 1,
  string: 2,
  int: 3,
  long: 5,
  double: 6,
  list: 7,
  class: 8,
  password: 9,
};

const brokerDefs = new Map(brokerConfigDefs.map((d) => [d.name, d]));

export const handleDescribeConfigs: RequestHandler<BrokerServices> = (body, context, services) => {
  const v = context.apiVersion;
  const includeSynonyms = v >= 1 && body.includeSynonyms === true;
  const includeDocs = body.includeDocumentation === true;
  const results = (body.resources as Message[]).map((r) => {
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    const keys = r.configurationKeys as string[] | null;
    const wantedKey = (name: string) => keys === null || keys.includes(name);
    const entry = (def: AnyConfigDef, value: unknown, source: number, synonyms: Message[]) => ({
      name: def.name,
      value: configText(value),
      readOnly: false,
      isDefault: source === SOURCE_DEFAULT,
      configSource: source,
      isSensitive: def.type === 'password',
      synonyms: includeSynonyms ? synonyms : [],
      configType: CONFIG_TYPE[def.type] ?? 0,
      documentation: includeDocs ? def.doc : null,
    });
    if (r.resourceType === RESOURCE_TOPIC) {
      const topic = services.logs.topic(r.resourceName);
      if (topic === undefined) {
        return {
          ...base,
          errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          errorMessage: `Topic ${r.resourceName} does not exist`,
          configs: [],
        };
      }
      const configs = effectiveTopicConfigs(topic.configs, services.config)
        .filter((c) => wantedKey(c.def.name))
        .map((c) => entry(c.def, c.value, c.source, c.synonyms));
      return { ...base, errorCode: 0, errorMessage: null, configs };
    }
    if (r.resourceType === RESOURCE_BROKER) {
      if (r.resourceName !== '' && r.resourceName !== String(services.nodeId)) {
        return {
          ...base,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `This is broker ${services.nodeId}, not ${r.resourceName}`,
          configs: [],
        };
      }
      const configs = [...brokerDefs.values()]
        .filter((d) => wantedKey(d.name))
        .map((def) => {
          const value = services.config[def.name];
          const isDefault = configText(value) === configText(def.default);
          const source = isDefault ? SOURCE_DEFAULT : SOURCE_STATIC_BROKER;
          const synonyms: Message[] = [{ name: def.name, value: configText(value), source }];
          if (!isDefault)
            synonyms.push({
              name: def.name,
              value: configText(def.default),
              source: SOURCE_DEFAULT,
            });
          return entry(def, value, source, synonyms);
        });
      return { ...base, errorCode: 0, errorMessage: null, configs };
    }
    return {
      ...base,
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: `Resource type ${r.resourceType} is not supported (2 topic, 4 broker)`,
      configs: [],
    };
  });
  return { throttleTimeMs: 0, results };
};

/**
 * Every topic config key with its effective value for a topic with these overrides,
 * its source and its synonyms in precedence order (the topic's override, the broker's
 * log.* key when set to other than Kafka's default, the default). DescribeConfigs
 * lists them, and CreateTopics v5+ answers them for the topic it creates (KIP-525).
 */
export function effectiveTopicConfigs(
  overrides: Readonly<Record<string, string>>,
  brokerConfig: Readonly<Record<string, unknown>>,
): Array<{ def: AnyConfigDef; value: unknown; source: number; synonyms: Message[] }> {
  return topicConfigDefs.map((def) => {
    const synonyms: Message[] = [];
    const override = overrides[def.name];
    if (override !== undefined)
      synonyms.push({ name: def.name, value: override, source: SOURCE_TOPIC });
    // Keys with no broker synonym (remote.storage.enable, ...) name themselves as the default.
    const brokerKey = brokerKeyForTopicKey.get(def.name) ?? def.name;
    const brokerValue = brokerKeyForTopicKey.has(def.name) ? brokerConfig[brokerKey] : undefined;
    const brokerSet =
      brokerValue !== undefined && configText(brokerValue) !== configText(def.default);
    if (brokerSet)
      synonyms.push({
        name: brokerKey,
        value: configText(brokerValue),
        source: SOURCE_STATIC_BROKER,
      });
    synonyms.push({ name: brokerKey, value: configText(def.default), source: SOURCE_DEFAULT });
    if (override !== undefined) return { def, value: override, source: SOURCE_TOPIC, synonyms };
    return brokerSet
      ? { def, value: brokerValue, source: SOURCE_STATIC_BROKER, synonyms }
      : { def, value: def.default, source: SOURCE_DEFAULT, synonyms };
  });
}

/** Kafka's text form of a typed config value. */
export function configText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.join(',');
  if (value === NEVER) return '9223372036854775807';
  return String(value);
}
