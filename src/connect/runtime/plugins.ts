/**
 * The plugin registry: every connector, converter, transform and predicate this worker
 * can use, found once at startup and looked up by name afterwards.
 *
 * Where plugins come from (see src/connect/api/plugin-manifest.ts for the folder format):
 *   1. the built-in converters, transforms and predicates (src/connect/converters,
 *      src/connect/transforms), registered first;
 *   2. every folder listed in `plugin.path`: a listed folder that has an entry module
 *      itself (package.json, index.js or index.ts) is one plugin folder, otherwise each
 *      of its subfolders with an entry module is one. TypeScript entries load under
 *      tsx, or through tsx registered on demand when the worker runs its compiled
 *      build; a folder of the repository with a compiled twin in dist/ loads the twin
 *      then (src/util/code-layout.ts). JavaScript entries load anywhere.
 *
 * Invariants: a name (class name, alias, simple name, simple name without its type
 * suffix) resolves to exactly one manifest. A folder that fails to import, exports
 * something that is not a manifest array, or claims a name another folder already holds
 * is logged with the reason and skipped as a whole (its connector and task stay
 * together or not at all); the worker starts with the others. Those failures are kept
 * in `problems` for the CLI and tests to show.
 *
 * Loading happens once, before the REST server starts; afterwards the registry is
 * read-only, so any caller may use it from anywhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compiledTwin, loadTypeScript } from '../../util/code-layout.ts';
import type { Logger } from '../../util/logger.ts';
import {
  loadManifests,
  type PluginManifest,
  type PluginType,
  pluginNames,
} from '../api/plugin-manifest.ts';
import { converterPlugins } from '../converters/index.ts';
import { transformPlugins } from '../transforms/index.ts';

/** Where a plugin came from: `builtin` or the plugin folder's absolute path. */
export type PluginLocation = 'builtin' | string;

export interface PluginDesc {
  readonly manifest: PluginManifest;
  readonly location: PluginLocation;
}

/** One entry of GET /connector-plugins, with Kafka Connect's field names. */
export interface PluginInfo {
  class: string;
  type: PluginType;
  version: string;
}

export interface PluginProblem {
  folder: string;
  error: string;
}

/** Type order of GET /connector-plugins?connectorsOnly=false, as Kafka Connect lists them. */
const listingOrder: readonly PluginType[] = [
  'sink',
  'source',
  'transformation',
  'predicate',
  'converter',
];

export class PluginRegistry {
  private readonly byName = new Map<string, PluginDesc>();
  private readonly all: PluginDesc[] = [];
  readonly problems: PluginProblem[] = [];

  /** Register a group of manifests from one location, all or none. */
  add(manifests: readonly PluginManifest[], location: PluginLocation): PluginProblem | undefined {
    const claimed = new Map<string, PluginManifest>();
    for (const manifest of manifests) {
      for (const name of pluginNames(manifest)) {
        const holder = this.byName.get(name);
        const sibling = claimed.get(name);
        if (holder !== undefined || (sibling !== undefined && sibling !== manifest)) {
          const where = holder?.location ?? location;
          const problem = {
            folder: location,
            error: `${manifest.className} claims the name ${name}, already used by ${holder?.manifest.className ?? sibling?.className} (${where})`,
          };
          this.problems.push(problem);
          return problem;
        }
        claimed.set(name, manifest);
      }
    }
    for (const manifest of manifests) {
      const desc = { manifest, location };
      this.all.push(desc);
      for (const name of pluginNames(manifest)) this.byName.set(name, desc);
    }
    return undefined;
  }

  /** The plugin answering to a class name or alias, if any. */
  find(name: string): PluginDesc | undefined {
    return this.byName.get(name.trim());
  }

  /** The manifest for `name` if it is of one of `types`. */
  findOfType<T extends PluginType>(
    name: string,
    ...types: T[]
  ): Extract<PluginManifest, { type: T }> | undefined {
    const desc = this.find(name);
    if (desc === undefined || !(types as PluginType[]).includes(desc.manifest.type))
      return undefined;
    return desc.manifest as Extract<PluginManifest, { type: T }>;
  }

  /** Every registered plugin, in registration order. */
  descriptors(): readonly PluginDesc[] {
    return this.all;
  }

  /**
   * The listing of GET /connector-plugins: connectors only (sinks, then sources), or
   * every type; within a type sorted by class name, as Kafka Connect's sorted sets are.
   */
  list(connectorsOnly: boolean): PluginInfo[] {
    const types = connectorsOnly ? listingOrder.slice(0, 2) : listingOrder;
    return types.flatMap((type) =>
      this.all
        .filter((d) => d.manifest.type === type)
        .map((d) => ({ class: d.manifest.className, type, version: d.manifest.version }))
        .sort((a, b) => (a.class < b.class ? -1 : a.class > b.class ? 1 : 0)),
    );
  }

  /** Names a connector class may be given as, for error messages. */
  connectorNames(): string[] {
    return this.all
      .filter((d) => d.manifest.type === 'source' || d.manifest.type === 'sink')
      .map((d) => d.manifest.className);
  }
}

export interface LoadPluginsOptions {
  /** The `plugin.path` folders. */
  pluginPath: readonly string[];
  logger: Logger;
  /** Register the built-in converters and transforms (default true). */
  builtins?: boolean;
}

/** Find and import every plugin folder; broken folders are logged and skipped. */
export async function loadPlugins(options: LoadPluginsOptions): Promise<PluginRegistry> {
  const registry = new PluginRegistry();
  const { logger } = options;
  if (options.builtins !== false) {
    registry.add(converterPlugins, 'builtin');
    registry.add(transformPlugins, 'builtin');
  }
  for (const folder of pluginFolders(options.pluginPath, registry, logger)) {
    let manifests: PluginManifest[];
    let entry: string | undefined;
    try {
      entry = entryModule(compiledTwin(folder) ?? folder);
      if (entry === undefined) continue;
      if (entry.endsWith('.ts')) await loadTypeScript();
      const loaded: unknown = await import(pathToFileURL(entry).href);
      manifests = loadManifests(loaded, folder);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      registry.problems.push({ folder, error });
      logger.error({ folder, err: e }, `Skipping plugin folder ${folder}: ${error}`);
      continue;
    }
    const problem = registry.add(manifests, folder);
    if (problem !== undefined) {
      logger.error({ folder }, `Skipping plugin folder ${folder}: ${problem.error}`);
      continue;
    }
    logger.info(
      { folder, entry, plugins: manifests.map((m) => m.className) },
      `Loaded ${manifests.length} plugin(s) from ${folder}`,
    );
  }
  return registry;
}

/** The plugin folders under the listed paths, in a stable (sorted) order. */
function pluginFolders(
  paths: readonly string[],
  registry: PluginRegistry,
  logger: Logger,
): string[] {
  const folders: string[] = [];
  for (const listed of paths) {
    const path = resolve(listed);
    if (!isDirectory(path)) {
      registry.problems.push({ folder: path, error: 'not a directory' });
      logger.warn({ folder: path }, `plugin.path entry ${path} is not a directory; ignored`);
      continue;
    }
    if (looksLikePlugin(path)) {
      folders.push(path);
      continue;
    }
    for (const child of readdirSync(path).sort()) {
      const folder = join(path, child);
      if (child.startsWith('.') || !isDirectory(folder)) continue;
      if (!looksLikePlugin(folder)) {
        logger.debug(
          { folder },
          `${folder} has no package.json, index.js or index.ts; not a plugin`,
        );
        continue;
      }
      folders.push(folder);
    }
  }
  return folders;
}

/**
 * A plugin folder's entry: package.json's `main`, else index.js, else index.ts. A
 * package.json whose main is missing or unreadable makes the folder broken (throws)
 * rather than silently falling back, so the author learns why it did not load.
 */
function entryModule(folder: string): string | undefined {
  const pkg = join(folder, 'package.json');
  if (existsSync(pkg)) {
    const main = (JSON.parse(readFileSync(pkg, 'utf8')) as { main?: unknown }).main;
    if (typeof main === 'string') {
      const entry = resolve(folder, main);
      if (!existsSync(entry)) throw new Error(`package.json main ${main} does not exist`);
      return entry;
    }
  }
  for (const name of ['index.js', 'index.ts']) {
    const entry = join(folder, name);
    if (existsSync(entry)) return entry;
  }
  if (existsSync(pkg))
    throw new Error('package.json has no main and there is no index.js or index.ts');
  return undefined;
}

function looksLikePlugin(folder: string): boolean {
  return ['package.json', 'index.js', 'index.ts'].some((f) => existsSync(join(folder, f)));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
