/**
 * Connector config validation, answered in Kafka Connect's ConfigInfos format (the body
 * of PUT /connector-plugins/{plugin}/config/validate, and the source of the 400 that
 * refuses an invalid create or update):
 *
 *   { "name": "<connector.class as given>", "error_count": N, "groups": [...],
 *     "configs": [ { "definition": {name, type, required, default_value, importance,
 *                    documentation, group, order, width, display_name,
 *                    dependents} | null,
 *                    "value": {name, value, recommended_values, errors, visible} } ] }
 *
 * What is checked, in Kafka Connect's order: the common connector keys enriched for
 * this config (connector-config.ts: transforms, predicates, topic creation groups), the
 * connector plugin's own keys, the connector's cross-field `validate` hook (only when
 * every plugin key parsed, as the API promises; it is told the cluster's other
 * connectors, see validationContext), then the key, value and header
 * converters' keys under their prefixes (only for converters the config names, as
 * Kafka Connect does). A key nobody defines is refused when it looks like a typo of a
 * defined key or is another connector plugin's key (unknown-connector-keys.ts); other
 * such keys are accepted (they reach the connector) unless their value is null, and
 * listed in the log when the connector starts.
 *
 * Error texts follow Kafka's ConfigDef: `Missing required configuration "k" which has
 * no default value.` and `Invalid value v for configuration k: <reason>`.
 * A missing or unknown connector.class is not a per-field result but a bad-request
 * HerderError, as Kafka Connect answers 400 before validating anything.
 */
import type { AnyConfigDef, ConfigType } from '../../config/config-def.ts';
import { parseValue } from '../../config/config-def.ts';
import type {
  Connector,
  ConnectorConfig,
  SourceConnector,
  ValidationContext,
} from '../api/connector.ts';
import type {
  PluginType,
  SinkConnectorManifest,
  SourceConnectorManifest,
} from '../api/plugin-manifest.ts';
import { HerderError } from '../herder/herder.ts';
import { type ClientOverridePolicy, clientKeyProblems } from './client-keys.ts';
import {
  commonConnectorDefs,
  enrichedConnectorDefs,
  prefixedDefs,
  rawList,
  sinkOnlyDefs,
  sourceOnlyDefs,
} from './connector-config.ts';
import { exactlyOnceValidationErrors } from './exactly-once.ts';
import { consumerSettings, producerSettings } from './kafka-clients.ts';
import { withPrefix } from './plugin-config.ts';
import type { PluginRegistry } from './plugins.ts';
import { unknownConnectorKeys } from './unknown-connector-keys.ts';

/** What validation needs to know of the worker (not shown to plugins). */
export interface WorkerValidation {
  /** exactly.once.source.support=enabled on this (distributed) worker. */
  readonly exactlyOnceSource: boolean;
  /** Source connectors may have their own offsets topic (distributed mode). */
  readonly connectorOffsetsTopics?: boolean;
  /** connector.client.config.override.policy (Kafka's default All). */
  readonly clientOverridePolicy?: ClientOverridePolicy;
}

const NO_EXACTLY_ONCE: WorkerValidation = { exactlyOnceSource: false };

export interface ConfigKeyInfo {
  name: string;
  type: string;
  required: boolean;
  default_value: string | null;
  importance: string;
  documentation: string;
  group: string | null;
  /** Kafka serializes ConfigKeyInfo.orderInGroup as "order" (its getter's @JsonProperty). */
  order: number;
  width: string;
  display_name: string;
  dependents: string[];
}

export interface ConfigValueInfo {
  name: string;
  value: string | null;
  recommended_values: string[];
  errors: string[];
  visible: boolean;
}

export interface ConfigInfo {
  definition: ConfigKeyInfo | null;
  value: ConfigValueInfo | null;
}

export interface ConfigInfos {
  name: string;
  error_count: number;
  groups: string[];
  configs: ConfigInfo[];
}

export type RawConnectorConfig = Readonly<Record<string, string | null>>;

const NULL_VALUE_ERROR = 'Null value can not be supplied as the configuration value.';

/**
 * What a connector's `validate` hook learns of the cluster: the name under test (null
 * when a config is only validated without one) and every other stored connector, by
 * name. The connector under test is left out by name, so updating a connector with
 * its own config never conflicts with itself. Herders build it from the config state
 * they decide the write on. The configs are copies: a plugin cannot change the
 * herder's state through them.
 */
export function validationContext(
  connectorName: string | null | undefined,
  connectors: Iterable<readonly [string, ConnectorConfig]>,
): ValidationContext {
  const name =
    connectorName === undefined || connectorName === null || connectorName.trim() === ''
      ? null
      : connectorName;
  const otherConnectors: Array<{ name: string; config: ConnectorConfig }> = [];
  for (const [other, config] of connectors) {
    if (other !== name) otherConnectors.push({ name: other, config: Object.freeze({ ...config }) });
  }
  // By name, so a plugin that names the first conflicting connector names the same one
  // whatever order the store keeps them in.
  otherConnectors.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { connectorName: name, otherConnectors };
}

/** Validate a connector config; throws HerderError('bad-request') for a missing or unknown class. */
export function validateConnectorConfig(
  plugins: PluginRegistry,
  raw: RawConnectorConfig,
  context: ValidationContext,
  worker: WorkerValidation = NO_EXACTLY_ONCE,
): ConfigInfos {
  const connType = raw['connector.class'];
  if (typeof connType !== 'string') {
    throw new HerderError(
      'bad-request',
      `Connector config ${javaMap(raw)} contains no connector type`,
    );
  }
  const manifest = plugins.findOfType(connType, 'source', 'sink');
  if (manifest === undefined) {
    throw new HerderError(
      'bad-request',
      `Failed to find any class that implements Connector and which name matches ${connType}, available connectors are: ${plugins.connectorNames().join(', ')}`,
    );
  }

  // Definitions by name, in order; the plugin's own win over same-named common ones
  // but keep the common key's position, as Kafka Connect's LinkedHashMap.putAll does.
  const defs = new Map<string, AnyConfigDef>();
  for (const def of enrichedConnectorDefs(plugins, manifest.type, raw)) defs.set(def.name, def);
  for (const def of manifest.configDefs) defs.set(def.name, def);

  const values = new Map<string, ValidatedValue>();
  for (const def of defs.values()) values.set(def.name, validateKey(def, raw));
  addNullValueErrors(raw, values);
  if (manifest.type === 'sink') checkSinkTopics(raw, values);
  // One instance for the plugin's hooks (its validate, and exactlyOnceSupport etc.).
  const connector = manifest.createConnector();
  runConnectorHook(manifest, connector, raw, values, context);
  if (manifest.type === 'source')
    checkExactlyOnce(connector as SourceConnector, raw, values, worker);
  addUnknownKeyErrors(plugins, manifest, raw, [...defs.values()], values);
  addClientOverrideErrors(manifest.type, raw, values, worker.clientOverridePolicy ?? 'All');

  const result = assemble(connType, [...defs.values()], values, plugins);
  for (const [key, noun] of [
    ['key.converter', 'converter'],
    ['value.converter', 'converter'],
    ['header.converter', 'converter'],
  ] as const) {
    const cls = raw[key];
    const converter = typeof cls === 'string' ? plugins.findOfType(cls, noun) : undefined;
    if (converter === undefined) continue;
    const prefixed = prefixedDefs(converter.configDefs, `${key}.`);
    const converterValues = new Map(prefixed.map((d) => [d.name, validateKey(d, raw)]));
    const infos = assemble('', prefixed, converterValues, plugins);
    result.error_count += infos.error_count;
    result.configs.push(...infos.configs);
    for (const g of infos.groups) if (!result.groups.includes(g)) result.groups.push(g);
  }
  return result;
}

/**
 * Keys of a (valid) connector config that nobody defines and that validation let
 * through: the worker logs them when the connector starts.
 */
export function unlistedConnectorKeys(
  plugins: PluginRegistry,
  manifest: SourceConnectorManifest | SinkConnectorManifest,
  raw: RawConnectorConfig,
): string[] {
  const defs = [...enrichedConnectorDefs(plugins, manifest.type, raw), ...manifest.configDefs];
  return unknownConnectorKeys(plugins, manifest, raw, defs).unlisted;
}

/** Every error message of a ConfigInfos, in order, for the 400 that refuses a config. */
export function configErrorMessages(infos: ConfigInfos): string[] {
  return infos.configs.flatMap((c) => c.value?.errors ?? []);
}

/**
 * GET /connector-plugins/{plugin}/config: the plugin's own keys, then (for connectors)
 * the common keys it does not redefine, as Kafka Connect lists them.
 */
export function pluginConfigKeyInfos(
  plugins: PluginRegistry,
  type: PluginType,
  defs: readonly AnyConfigDef[],
): ConfigKeyInfo[] {
  const all = new Map<string, AnyConfigDef>();
  for (const d of defs) all.set(d.name, d);
  if (type === 'source' || type === 'sink') {
    const base = [
      ...commonConnectorDefs(plugins),
      ...(type === 'sink' ? sinkOnlyDefs : sourceOnlyDefs),
    ];
    for (const d of base) if (!all.has(d.name)) all.set(d.name, d);
  }
  const list = [...all.values()];
  return list.map((d) => configKeyInfo(d, list));
}

interface ValidatedValue {
  name: string;
  value: string | null;
  /** The typed value, for the connector's cross-field hook; undefined when it did not parse. */
  typed: unknown;
  errors: string[];
}

function validateKey(def: AnyConfigDef, raw: RawConnectorConfig): ValidatedValue {
  const given = Object.hasOwn(raw, def.name) ? raw[def.name] : undefined;
  const absent =
    given === undefined ||
    given === null ||
    (given.trim() === '' &&
      def.type !== 'string' &&
      def.type !== 'list' &&
      def.type !== 'password');
  if (absent) {
    if (def.default === undefined) {
      return {
        name: def.name,
        value: null,
        typed: undefined,
        errors: [`Missing required configuration "${def.name}" which has no default value.`],
      };
    }
    return {
      name: def.name,
      value: valueText(def.default, def.type),
      typed: def.default,
      errors: [],
    };
  }
  const parsed = parseValue(def, given);
  if (parsed.error !== undefined) {
    return {
      name: def.name,
      value: null,
      typed: undefined,
      errors: [`Invalid value ${shown(def, given)} for configuration ${def.name}: ${parsed.error}`],
    };
  }
  const problem = parsed.value === null ? undefined : def.validator?.(parsed.value, def.name);
  return {
    name: def.name,
    value: valueText(parsed.value, def.type),
    typed: problem === undefined ? parsed.value : undefined,
    errors:
      problem === undefined
        ? []
        : [`Invalid value ${shown(def, given)} for configuration ${def.name}: ${problem}`],
  };
}

function shown(def: AnyConfigDef, given: string): string {
  return def.type === 'password' ? '[hidden]' : given;
}

/** Kafka's ConfigDef.convertToString: lists comma-joined, passwords hidden, null kept. */
function valueText(value: unknown, type: ConfigType): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'password') return '[hidden]';
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

function addNullValueErrors(raw: RawConnectorConfig, values: Map<string, ValidatedValue>): void {
  for (const [key, v] of Object.entries(raw)) {
    if (v !== null) continue;
    const entry = values.get(key) ?? { name: key, value: null, typed: undefined, errors: [] };
    entry.errors.push(NULL_VALUE_ERROR);
    values.set(key, entry);
  }
}

/** Typos of defined keys and other connectors' keys (unknown-connector-keys.ts). */
function addUnknownKeyErrors(
  plugins: PluginRegistry,
  manifest: SourceConnectorManifest | SinkConnectorManifest,
  raw: RawConnectorConfig,
  defs: readonly AnyConfigDef[],
  values: Map<string, ValidatedValue>,
): void {
  const erred = new Set([...values.values()].filter((v) => v.errors.length > 0).map((v) => v.name));
  for (const { key, message } of unknownConnectorKeys(plugins, manifest, raw, defs, erred).errors) {
    values.set(key, { name: key, value: raw[key] ?? null, typed: undefined, errors: [message] });
  }
}

/**
 * KIP-458's client overrides (AbstractHerder.validateClientOverrides): the policy's
 * refusals and every key the clients do not implement (client-keys.ts), then the
 * values of the keys they read, parsed as the task will. The client a connector type
 * does not have takes no overrides: a source has no consumer, and a sink's dead letter
 * queue producer does not read producer overrides.
 */
function addClientOverrideErrors(
  type: 'source' | 'sink',
  raw: RawConnectorConfig,
  values: Map<string, ValidatedValue>,
  policy: ClientOverridePolicy,
): void {
  const add = (key: string, message: string) => {
    const entry = values.get(key) ?? {
      name: key,
      value: raw[key] ?? null,
      typed: undefined,
      errors: [],
    };
    entry.errors.push(message);
    values.set(key, entry);
  };
  const absent = type === 'source' ? 'consumer' : 'producer';
  for (const key of Object.keys(raw)) {
    if (!key.startsWith(`${absent}.override.`)) continue;
    add(
      key,
      type === 'source'
        ? 'not supported: a source connector has no consumer to override'
        : "not supported: a sink connector's only producer is its dead letter queue's, which takes no producer.override.* keys",
    );
  }
  for (const kind of ['producer', 'consumer', 'admin'] as const) {
    if (kind === absent) continue;
    const prefix = `${kind}.override.`;
    const problems = clientKeyProblems(kind, prefix, raw, policy);
    for (const { key, message } of problems) add(key, message);
    if (problems.length > 0 || kind === 'admin') continue;
    const keys: Record<string, string> = {};
    for (const [k, v] of Object.entries(withPrefix(raw, prefix)))
      if (typeof v === 'string') keys[k] = v;
    if (Object.keys(keys).length === 0) continue;
    try {
      if (kind === 'producer') producerSettings(keys);
      else consumerSettings(keys);
    } catch (e) {
      const named = /configuration (\S+):/.exec((e as Error).message)?.[1];
      const key = named !== undefined && Object.hasOwn(keys, named) ? named : Object.keys(keys)[0];
      add(`${prefix}${key}`, (e as Error).message);
    }
  }
}

/** SinkConnectorConfig.validate: exactly one of topics and topics.regex; the DLQ is not an input. */
function checkSinkTopics(raw: RawConnectorConfig, values: Map<string, ValidatedValue>): void {
  const topics = rawList(raw, 'topics');
  const regex = (raw['topics.regex'] ?? '').trim();
  const add = (key: string, message: string) => values.get(key)?.errors.push(message);
  if (topics.length > 0 && regex !== '') {
    const message = 'topics and topics.regex are mutually exclusive options, but both are set.';
    add('topics', message);
    add('topics.regex', message);
  } else if (topics.length === 0 && regex === '') {
    const message = 'Must configure one of topics or topics.regex';
    add('topics', message);
    add('topics.regex', message);
  }
  const dlq = (raw['errors.deadletterqueue.topic.name'] ?? '').trim();
  if (dlq !== '' && topics.includes(dlq)) {
    add(
      'errors.deadletterqueue.topic.name',
      `The DLQ topic '${dlq}' may not be included in the list of topics ('topics=${topics.join(',')}') consumed by the connector`,
    );
  }
}

/** KIP-618's checks, on keys that parsed (exactly-once.ts has Kafka's messages). */
function checkExactlyOnce(
  connector: SourceConnector,
  raw: RawConnectorConfig,
  values: Map<string, ValidatedValue>,
  worker: WorkerValidation,
): void {
  const parsed = (key: string) => (values.get(key)?.errors.length ?? 1) === 0;
  if (!parsed('exactly.once.support') || !parsed('transaction.boundary')) return;
  const config: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string') config[k] = v;
  const errors = exactlyOnceValidationErrors(
    connector,
    config,
    worker.exactlyOnceSource,
    worker.connectorOffsetsTopics ?? false,
  );
  for (const [key, messages] of errors) values.get(key)?.errors.push(...messages);
}

function runConnectorHook(
  manifest: SourceConnectorManifest | SinkConnectorManifest,
  connector: Connector,
  raw: RawConnectorConfig,
  values: Map<string, ValidatedValue>,
  context: ValidationContext,
): void {
  const typed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) typed[k] = v;
  for (const def of manifest.configDefs) {
    const v = values.get(def.name);
    if (v === undefined || v.typed === undefined) return;
    typed[def.name] = v.typed;
  }
  if (connector.validate === undefined) return;
  let errors: ReturnType<NonNullable<typeof connector.validate>>;
  try {
    errors = connector.validate(typed, context);
  } catch (e) {
    errors = [
      {
        key: 'connector.class',
        value: raw['connector.class'],
        message: `Error while validating connector config: ${(e as Error).message}`,
      },
    ];
  }
  for (const error of errors) {
    const entry = values.get(error.key) ?? {
      name: error.key,
      value: raw[error.key] ?? null,
      typed: undefined,
      errors: [],
    };
    entry.errors.push(error.message);
    values.set(error.key, entry);
  }
}

/** AbstractHerder.generateResult: values without a definition first, then every definition. */
function assemble(
  name: string,
  defs: readonly AnyConfigDef[],
  values: Map<string, ValidatedValue>,
  plugins: PluginRegistry,
): ConfigInfos {
  const configs: ConfigInfo[] = [];
  const defined = new Set(defs.map((d) => d.name));
  let errorCount = 0;
  for (const v of values.values()) {
    if (defined.has(v.name)) continue;
    configs.push({ definition: null, value: valueInfo(v, []) });
    errorCount += v.errors.length;
  }
  const groups: string[] = [];
  for (const def of defs) {
    if (def.group !== undefined && !groups.includes(def.group)) groups.push(def.group);
    const v = values.get(def.name);
    configs.push({
      definition: configKeyInfo(def, defs),
      value: v === undefined ? null : valueInfo(v, recommendations(def, plugins)),
    });
    errorCount += v?.errors.length ?? 0;
  }
  return { name, error_count: errorCount, groups, configs };
}

function valueInfo(v: ValidatedValue, recommended: string[]): ConfigValueInfo {
  return {
    name: v.name,
    value: v.value,
    recommended_values: recommended,
    errors: v.errors,
    visible: true,
  };
}

/** Kafka Connect recommends the installed classes for transform and predicate types. */
function recommendations(def: AnyConfigDef, plugins: PluginRegistry): string[] {
  const type: PluginType | undefined = /^transforms\.[^.]+\.type$/.test(def.name)
    ? 'transformation'
    : /^predicates\.[^.]+\.type$/.test(def.name)
      ? 'predicate'
      : undefined;
  if (type === undefined) return [];
  return plugins
    .list(false)
    .filter((p) => p.type === type)
    .map((p) => p.class);
}

/** ConfigKeyInfo of one definition; order counts within its group from 1. */
export function configKeyInfo(def: AnyConfigDef, siblings: readonly AnyConfigDef[]): ConfigKeyInfo {
  const order =
    def.group === undefined ? -1 : siblings.filter((d) => d.group === def.group).indexOf(def) + 1;
  return {
    name: def.name,
    type: def.type.toUpperCase(),
    required: def.default === undefined,
    default_value: def.default === undefined ? null : valueText(def.default, def.type),
    importance: (def.importance ?? 'medium').toUpperCase(),
    documentation: def.doc,
    group: def.group ?? null,
    order,
    width: 'NONE',
    display_name: def.name,
    dependents: [],
  };
}

/** Java's Map.toString, as Kafka Connect's "contains no connector type" message shows the config. */
function javaMap(raw: RawConnectorConfig): string {
  return `{${Object.entries(raw)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}}`;
}
