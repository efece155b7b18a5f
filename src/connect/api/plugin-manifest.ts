/**
 * Plugin manifests: how a plugin tells the runtime what it provides.
 *
 * How the runtime finds plugins (the same for ours under connectors/ and for a
 * third party's folder):
 *   - `plugin.path` is a comma-separated list of directories. Each subdirectory of
 *     such a directory is one plugin folder (a directory listed that itself holds a
 *     package.json or index file is also accepted as one plugin folder).
 *   - The folder's entry module is, in order: the `main` of its package.json; else
 *     `index.js`; else `index.ts` (TypeScript entries need the worker to run under
 *     tsx, as `npm start` does).
 *   - The entry module's default export is an array of PluginManifest (one folder may
 *     hold a connector pair plus its converters or transforms). Build it with
 *     `definePlugins(...)` to have it type-checked.
 *   - A plugin imports from src/connect/api only (a third-party folder may bundle its
 *     own copy of the types: manifests are checked structurally, by `loadManifests`).
 *   - Names: a plugin answers to its `className`, every alias, and, as Kafka Connect
 *     does, the simple name (after the last dot) and the simple name without its type
 *     suffix (`FileStreamSourceConnector` -> `FileStreamSource`). `pluginNames` lists
 *     them. Two plugins claiming one name is a load error naming both folders.
 */
import type { AnyConfigDef } from '../../config/config-def.ts';
import type { SinkConnector, SourceConnector } from './connector.ts';
import type { Converter } from './converter.ts';
import { ConnectException } from './errors.ts';
import type { SinkTask } from './sink-task.ts';
import type { SourceTask } from './source-task.ts';
import type { Predicate, Transformation } from './transformation.ts';

export type PluginType = 'source' | 'sink' | 'converter' | 'transformation' | 'predicate';

interface ManifestBase {
  /** The canonical name, e.g. `org.connect.file.FileStreamSourceConnector`. */
  readonly className: string;
  /** Other names users may give, e.g. Kafka's or Debezium's class names. */
  readonly aliases?: readonly string[];
  readonly version: string;
  /** One line for `/connector-plugins` and the docs. */
  readonly doc?: string;
  /** Keys this plugin understands; checked before start and by REST validate. */
  readonly configDefs: readonly AnyConfigDef[];
}

export interface SourceConnectorManifest extends ManifestBase {
  readonly type: 'source';
  /**
   * Settings the topics this connector writes need, in KIP-158 form
   * (`topic.creation.default.cleanup.policy: compact`, ...). The runtime creates
   * missing topics with them before the first record, unless the connector's own
   * config sets `topic.creation.*` keys, which win.
   */
  readonly topicCreationDefaults?: Readonly<Record<string, string>>;
  createConnector(): SourceConnector;
  createTask(): SourceTask;
}

export interface SinkConnectorManifest extends ManifestBase {
  readonly type: 'sink';
  createConnector(): SinkConnector;
  createTask(): SinkTask;
}

export interface ConverterManifest extends ManifestBase {
  readonly type: 'converter';
  create(): Converter;
}

export interface TransformationManifest extends ManifestBase {
  readonly type: 'transformation';
  create(): Transformation;
}

export interface PredicateManifest extends ManifestBase {
  readonly type: 'predicate';
  create(): Predicate;
}

export type PluginManifest =
  | SourceConnectorManifest
  | SinkConnectorManifest
  | ConverterManifest
  | TransformationManifest
  | PredicateManifest;

/** Identity function that type-checks a plugin folder's default export. */
export function definePlugins(...manifests: PluginManifest[]): PluginManifest[] {
  return manifests;
}

const typeSuffix: Record<PluginType, string> = {
  source: 'Connector',
  sink: 'Connector',
  converter: 'Converter',
  transformation: 'Transformation',
  predicate: 'Predicate',
};

/** Every name the plugin answers to, canonical first, without duplicates. */
export function pluginNames(manifest: PluginManifest): string[] {
  const names = [manifest.className, ...(manifest.aliases ?? [])];
  const simple = manifest.className.slice(manifest.className.lastIndexOf('.') + 1);
  names.push(simple);
  const suffix = typeSuffix[manifest.type];
  if (simple.endsWith(suffix) && simple.length > suffix.length) {
    names.push(simple.slice(0, -suffix.length));
  }
  return [...new Set(names)];
}

/**
 * Check a loaded entry module's default export and return its manifests. Throws a
 * ConnectException naming the folder and what is wrong, so a broken third-party
 * plugin is reported at startup rather than when a connector first uses it.
 */
export function loadManifests(entryModule: unknown, folder: string): PluginManifest[] {
  let exported = (entryModule as { default?: unknown } | null)?.default;
  // An entry loaded as CommonJS (TypeScript outside a "type": "module" package) has
  // its `export default` one level down.
  if (!Array.isArray(exported)) exported = (exported as { default?: unknown } | null)?.default;
  if (!Array.isArray(exported)) {
    throw new ConnectException(
      `Plugin folder ${folder}: the entry module must default-export an array of plugin manifests`,
    );
  }
  return exported.map((m, i) => {
    const problem = manifestProblem(m);
    if (problem !== undefined) {
      throw new ConnectException(`Plugin folder ${folder}: manifest #${i} ${problem}`);
    }
    return m as PluginManifest;
  });
}

function manifestProblem(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return 'is not an object';
  const r = m as Record<string, unknown>;
  if (typeof r.className !== 'string' || r.className === '') return 'has no className';
  if (typeof r.version !== 'string') return `(${r.className}) has no version`;
  if (!Array.isArray(r.configDefs)) return `(${r.className}) has no configDefs array`;
  if (r.aliases !== undefined && !Array.isArray(r.aliases)) {
    return `(${r.className}) aliases must be an array`;
  }
  switch (r.type) {
    case 'source':
    case 'sink':
      if (typeof r.createConnector !== 'function' || typeof r.createTask !== 'function') {
        return `(${r.className}) needs createConnector() and createTask()`;
      }
      return undefined;
    case 'converter':
    case 'transformation':
    case 'predicate':
      if (typeof r.create !== 'function') return `(${r.className}) needs create()`;
      return undefined;
    default:
      return `(${r.className}) has unknown type ${JSON.stringify(r.type)}`;
  }
}
