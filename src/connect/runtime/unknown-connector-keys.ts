/**
 * Keys of a connector config that nothing defines. Kafka Connect passes such keys to
 * the connector untouched (a connector may read keys it does not declare), so they
 * cannot all be refused. But a typo of a real key is accepted and ignored without a
 * word: `tabel.include.list` leaves table.include.list at its default, which captures
 * every table. So, for each key that neither the connector's definitions, the
 * runtime's connector keys, nor a runtime prefix covers:
 *
 *   - within a small edit distance of a key the connector or the runtime defines: a
 *     validation error, "unknown key 'tabel.include.list': did you mean
 *     'table.include.list'?" (a 400 on create and update, an error on that key in
 *     /config/validate);
 *   - defined by another installed connector plugin: a validation error naming that
 *     plugin (a sink config carrying a source's key does nothing);
 *   - anything else: passed through, and listed once when the connector starts
 *     (Worker.startConnector), in Kafka's AbstractConfig.logUnused words.
 *
 * Keys under a transformation's or predicate's prefix (`transforms.<alias>.`,
 * `predicates.<alias>.`) for an alias the config lists and whose type resolves: one
 * that plugin does not define is refused, a typo with the guess, any other as not
 * supported, naming the keys the plugin has (nothing else reads them, so Debezium's
 * `transforms.unwrap.route.by.field` would do nothing); `version` (KIP-891) is let
 * through.
 *
 * Never flagged: keys under the other prefixes the runtime reads or passes on
 * (converters', errors.*, the client overrides, checked by client-keys.ts, topic
 * creation, exactly-once keys, topics*, and transforms or predicates the config does
 * not list), since their keys depend on the plugins configured there; and a key that
 * already has an error (the connector's own validate refusing an unsupported Debezium
 * key says more than a guess would).
 *
 * Distance is the optimal string alignment distance (Levenshtein plus adjacent
 * transpositions, the commonest typo): at most 1 for keys shorter than 10 characters,
 * 2 from there; keys shorter than 4 characters are never guessed at, since every short
 * key is near another.
 */
import type { AnyConfigDef } from '../../config/config-def.ts';
import type { SinkConnectorManifest, SourceConnectorManifest } from '../api/plugin-manifest.ts';
import { rawList } from './connector-config.ts';
import type { PluginRegistry } from './plugins.ts';

/**
 * Prefixes of keys the runtime itself reads, or hands to a plugin or client it
 * configures (ConnectorConfig, SourceConnectorConfig, SinkConnectorConfig, KIP-458
 * client overrides, KIP-158 topic creation, KIP-618 exactly-once, KIP-891 plugin
 * versions).
 */
export const RUNTIME_KEY_PREFIXES: readonly string[] = [
  'key.converter.',
  'value.converter.',
  'header.converter.',
  'transforms.',
  'predicates.',
  'errors.',
  'producer.override.',
  'consumer.override.',
  'admin.override.',
  'topic.creation.',
  'exactly.once.',
  'transaction.boundary',
  'topics',
];

/**
 * Runtime keys a config may carry where no definition covers them: a sink's
 * offsets.storage.topic (a source key) and Kafka 4.1's KIP-891 plugin version.
 */
const RUNTIME_KEYS: ReadonlySet<string> = new Set([
  'offsets.storage.topic',
  'connector.plugin.version',
]);

const MIN_GUESSED_LENGTH = 4;

export interface UnknownKeyError {
  key: string;
  message: string;
}

export interface UnknownConnectorKeys {
  /** Keys refused, each with its message. */
  errors: UnknownKeyError[];
  /** Keys passed through, in config order: logged when the connector starts. */
  unlisted: string[];
}

/**
 * Classify the keys of `raw` that `defs` (every definition validation used: the
 * runtime's enriched keys and the plugin's own) does not cover. Keys in `skip` (they
 * have an error already) are left out of both lists.
 */
export function unknownConnectorKeys(
  plugins: PluginRegistry,
  manifest: SourceConnectorManifest | SinkConnectorManifest,
  raw: Readonly<Record<string, unknown>>,
  defs: readonly AnyConfigDef[],
  skip: ReadonlySet<string> = new Set(),
): UnknownConnectorKeys {
  const defined = new Set(defs.map((d) => d.name));
  const errors: UnknownKeyError[] = [];
  const unlisted: string[] = [];
  let others: Map<string, string> | undefined;
  const configured = configuredPlugins(plugins, raw);
  for (const key of Object.keys(raw)) {
    if (defined.has(key) || skip.has(key)) continue;
    const plugin = configured.find((p) => key.startsWith(p.prefix));
    if (plugin !== undefined) {
      if (skip.has(`${plugin.prefix}type`) || key === `${plugin.prefix}version`) continue;
      errors.push({ key, message: pluginKeyMessage(key, plugin, defined) });
      continue;
    }
    if (isRuntimeKey(key)) continue;
    const near = nearestKey(key, defined);
    if (near !== undefined) {
      errors.push({ key, message: `unknown key '${key}': did you mean '${near}'?` });
      continue;
    }
    others ??= otherConnectorKeys(plugins, manifest);
    const owner = others.get(key);
    if (owner !== undefined) {
      errors.push({
        key,
        message: `unknown key '${key}': it is a key of ${owner}, not of ${manifest.className}`,
      });
      continue;
    }
    unlisted.push(key);
  }
  return { errors, unlisted };
}

/** A transformation or predicate the config uses, under its alias's prefix. */
interface ConfiguredPlugin {
  /** `transforms.<alias>.` or `predicates.<alias>.`. */
  prefix: string;
  /** Its type as the config names it. */
  className: string;
}

/**
 * The transformations and predicates the config lists whose type resolves to a plugin:
 * only they read the keys under their prefix (keys of an alias not listed stay unread,
 * as in Kafka, and an unknown type has its own error).
 */
function configuredPlugins(
  plugins: PluginRegistry,
  raw: Readonly<Record<string, unknown>>,
): ConfiguredPlugin[] {
  const out: ConfiguredPlugin[] = [];
  for (const [list, kind] of [
    ['transforms', 'transformation'],
    ['predicates', 'predicate'],
  ] as const) {
    for (const alias of new Set(rawList(raw, list))) {
      const prefix = `${list}.${alias}.`;
      const cls = raw[`${prefix}type`];
      const manifest = typeof cls === 'string' ? plugins.findOfType(cls, kind) : undefined;
      if (manifest !== undefined) out.push({ prefix, className: String(cls) });
    }
  }
  // The longest prefix first, should one alias be a prefix of another (`a` and `a.b`).
  return out.sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * Why a key under a configured plugin's prefix that the plugin does not define is
 * refused: nothing else reads it, so a Debezium or Kafka SMT key this runtime's
 * implementation lacks (ExtractNewRecordState's route.by.field) would do nothing.
 */
function pluginKeyMessage(
  key: string,
  plugin: ConfiguredPlugin,
  defined: ReadonlySet<string>,
): string {
  const own = [...defined].filter((d) => d.startsWith(plugin.prefix));
  const near = nearestKey(key, own);
  if (near !== undefined) return `unknown key '${key}': did you mean '${near}'?`;
  const keys = own.map((d) => d.slice(plugin.prefix.length));
  return `not supported: ${key}: ${plugin.className} here does not implement '${key.slice(plugin.prefix.length)}' (its keys: ${keys.join(', ')})`;
}

/** Kafka's AbstractConfig.logUnused line, for a key passed through unread by the runtime. */
export function unusedKeyMessage(connector: string, key: string): string {
  return `The configuration '${key}' was supplied but isn't a known config of connector ${connector}; it is passed to the connector as it is (check it is not a typo).`;
}

function isRuntimeKey(key: string): boolean {
  return RUNTIME_KEYS.has(key) || RUNTIME_KEY_PREFIXES.some((p) => key.startsWith(p));
}

function maxDistance(key: string): number {
  if (key.length < MIN_GUESSED_LENGTH) return 0;
  return key.length < 10 ? 1 : 2;
}

/** The defined key nearest to `key` within the allowed distance (first by definition order). */
export function nearestKey(key: string, defined: Iterable<string>): string | undefined {
  const limit = maxDistance(key);
  if (limit === 0) return undefined;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of defined) {
    if (Math.abs(name.length - key.length) > limit) continue;
    const d = editDistance(key, name, limit);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Every key another connector plugin defines, mapped to that plugin's class name. */
function otherConnectorKeys(
  plugins: PluginRegistry,
  manifest: SourceConnectorManifest | SinkConnectorManifest,
): Map<string, string> {
  const owners = new Map<string, string>();
  for (const { manifest: other } of plugins.descriptors()) {
    if (other === manifest || (other.type !== 'source' && other.type !== 'sink')) continue;
    for (const def of other.configDefs) {
      if (!owners.has(def.name)) owners.set(def.name, other.className);
    }
  }
  return owners;
}

/**
 * Optimal string alignment distance between a and b, or limit + 1 once it is known to
 * exceed limit (rows are cut short when their minimum passes it).
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1);
    row[0] = i;
    rows.push(row);
  }
  for (let j = 0; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    let rowMin = rows[i][0];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2][j - 2] + 1);
      }
      rows[i][j] = d;
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
  }
  return Math.min(rows[a.length][b.length], limit + 1);
}
