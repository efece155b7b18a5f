/**
 * Kafka's config providers (KIP-297): a connector config value may hold references
 * `${provider:path:key}` (or `${provider:key}`) that the worker resolves before a
 * connector or task sees the config, so secrets live in files or the environment and
 * never in the config topic or in REST answers. The worker declares them as Kafka does:
 *
 *   config.providers=file,dir,env
 *   config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
 *   config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
 *   config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
 *   config.providers.<name>.param.<param>=...
 *
 * The three providers Kafka ships are built in (their class names or simple names):
 *   file  `${file:/etc/kafka/secrets.properties:db.password}`: a key of a properties file
 *   dir   `${dir:/run/secrets:db-password}`: the content of a file in a folder
 *   env   `${env:PG_PASSWORD}`: an environment variable (no path)
 * `allowed.paths` (file, dir; KIP-993) limits the files they read; `allowlist.pattern`
 * (env) the variables. Any other class is refused at worker start, naming the key: no
 * Java classes load here.
 *
 * Stricter than Kafka, which passes a reference it cannot resolve on unchanged (a
 * password of `${file:...}` then fails later with a misleading login error): a
 * reference to a provider the worker does not declare, a missing file or a missing key
 * is an error that names the connector key and the reference, in validation and at
 * start.
 *
 * Where it applies (the runtime calls it, plugins never see references): validation
 * (values shown as written, not resolved), connector and task start, deleted(),
 * alterOffsets() and the status' external state. Task configs a connector returns
 * get the reference back for every key whose connector value held one (Kafka's
 * reverse transform), so resolved secrets are not stored with the task configs.
 * Values are read at each resolution; a changed file takes effect at the next start.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve as resolvePath, sep } from 'node:path';
import { parse as parseProperties } from 'dot-properties';
import { type ConfigError, ConfigException } from '../../config/config-def.ts';
import type { ConnectorConfig, TaskConfig } from '../api/connector.ts';

/** One reference in a value: `${provider:path:key}`, path optional. */
const REFERENCE = /\$\{([^}:]*?):(?:([^}]*?):)?([^}]*?)\}/g;

interface Provider {
  /** The value of `key` at `path` (path is '' when the reference has none). */
  get(path: string, key: string): string;
}

const KAFKA_PACKAGE = 'org.apache.kafka.common.config.provider.';

const BUILT_IN: Record<string, (params: Record<string, string>) => Provider> = {
  FileConfigProvider: (params) => fileProvider(allowedPaths(params)),
  DirectoryConfigProvider: (params) => directoryProvider(allowedPaths(params)),
  EnvVarConfigProvider: (params) => envProvider(params['allowlist.pattern']),
};

/** A reference that cannot be resolved, for the key that holds it. */
export class UnresolvedReference extends Error {
  constructor(
    readonly key: string,
    readonly reference: string,
    reason: string,
  ) {
    super(`${key}: cannot resolve ${reference}: ${reason}`);
    this.name = 'UnresolvedReference';
  }
}

export class ConfigProviders {
  private constructor(private readonly providers: ReadonlyMap<string, Provider>) {}

  /** No providers: a config with references fails to resolve, naming config.providers. */
  static readonly none = new ConfigProviders(new Map());

  /**
   * The providers a worker config declares; throws ConfigException naming the key for
   * a provider without a class or with a class that is not built in.
   */
  static fromWorkerConfig(config: Readonly<Record<string, unknown>>): ConfigProviders {
    const names = listOf(config['config.providers']);
    const providers = new Map<string, Provider>();
    const errors: ConfigError[] = [];
    for (const name of names) {
      const classKey = `config.providers.${name}.class`;
      const cls = config[classKey];
      if (typeof cls !== 'string' || cls.trim() === '') {
        errors.push({
          key: classKey,
          value: cls,
          message: `config provider '${name}' (config.providers) needs a class`,
        });
        continue;
      }
      const simple = cls.trim().startsWith(KAFKA_PACKAGE)
        ? cls.trim().slice(KAFKA_PACKAGE.length)
        : cls.trim();
      const make = Object.hasOwn(BUILT_IN, simple) ? BUILT_IN[simple] : undefined;
      if (make === undefined) {
        errors.push({
          key: classKey,
          value: cls,
          message: `not supported: the worker has Kafka's ${Object.keys(BUILT_IN).join(', ')} (${KAFKA_PACKAGE}*); no other config provider classes load here`,
        });
        continue;
      }
      providers.set(name, make(paramsOf(config, `config.providers.${name}.param.`)));
    }
    if (errors.length > 0) throw new ConfigException(errors);
    return new ConfigProviders(providers);
  }

  /** The worker config's errors in config.providers.* (for the CLI's checks), or none. */
  static errorsIn(config: Readonly<Record<string, unknown>>): ConfigError[] {
    try {
      ConfigProviders.fromWorkerConfig(config);
      return [];
    } catch (e) {
      if (e instanceof ConfigException) return e.errors;
      throw e;
    }
  }

  /** Whether any value of the config holds a reference. */
  static hasReferences(config: Readonly<Record<string, string | null>>): boolean {
    return Object.values(config).some((v) => typeof v === 'string' && referencesIn(v).length > 0);
  }

  /**
   * The config with every reference replaced by its value; throws UnresolvedReference
   * for the first that cannot be resolved.
   */
  resolve<C extends Readonly<Record<string, string>>>(config: C): C {
    const { config: resolved, errors } = this.tryResolve(config);
    if (errors.length > 0) throw errors[0];
    return resolved as C;
  }

  /** As resolve, but collects every failure (for validation, one error per key). */
  tryResolve(config: Readonly<Record<string, string | null>>): {
    config: Record<string, string | null>;
    errors: UnresolvedReference[];
  } {
    const out: Record<string, string | null> = {};
    const errors: UnresolvedReference[] = [];
    for (const [key, value] of Object.entries(config)) {
      if (typeof value !== 'string' || !value.includes('${')) {
        out[key] = value;
        continue;
      }
      try {
        out[key] = value.replace(REFERENCE, (reference, provider: string, path, name: string) =>
          this.lookUp(key, reference, provider, path ?? '', name),
        );
      } catch (e) {
        if (!(e instanceof UnresolvedReference)) throw e;
        errors.push(e);
        out[key] = value;
      }
    }
    return { config: out, errors };
  }

  /**
   * Task configs as the connector returned them from its resolved config, with the
   * reference put back for every key whose raw connector value holds one.
   */
  static restoreReferences(raw: ConnectorConfig, taskConfigs: TaskConfig[]): TaskConfig[] {
    const withReferences = Object.entries(raw).filter(([, v]) => referencesIn(v).length > 0);
    if (withReferences.length === 0) return taskConfigs;
    return taskConfigs.map((task) => {
      const restored: Record<string, string> = { ...task };
      for (const [key, value] of withReferences)
        if (Object.hasOwn(task, key)) restored[key] = value;
      return restored;
    });
  }

  private lookUp(
    key: string,
    reference: string,
    providerName: string,
    path: string,
    name: string,
  ): string {
    const provider = this.providers.get(providerName);
    if (provider === undefined) {
      const declared = [...this.providers.keys()];
      throw new UnresolvedReference(
        key,
        reference,
        `the worker declares no config provider '${providerName}' (config.providers=${declared.join(',')}; ` +
          `add it with config.providers.${providerName}.class, as in Kafka)`,
      );
    }
    try {
      return provider.get(path, name);
    } catch (e) {
      throw new UnresolvedReference(key, reference, (e as Error).message);
    }
  }
}

function referencesIn(value: string | null): string[] {
  return typeof value === 'string' ? [...value.matchAll(REFERENCE)].map((m) => m[0]) : [];
}

function listOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return items.map((s) => String(s).trim()).filter((s) => s !== '');
}

function paramsOf(
  config: Readonly<Record<string, unknown>>,
  prefix: string,
): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(config))
    if (key.startsWith(prefix)) params[key.slice(prefix.length)] = String(value);
  return params;
}

/** `allowed.paths`: absolute folders the provider may read below; none = any path. */
function allowedPaths(params: Record<string, string>): string[] | null {
  const given = params['allowed.paths'];
  if (given === undefined) return null;
  return listOf(given).map((p) => resolvePath(p));
}

function checkAllowed(path: string, allowed: string[] | null): string {
  if (path === '') throw new Error('the reference names no path');
  const absolute = resolvePath(path);
  if (allowed !== null && !allowed.some((a) => absolute === a || absolute.startsWith(a + sep)))
    throw new Error(`${path} is outside allowed.paths (${allowed.join(',')})`);
  return absolute;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(
      `could not read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

function fileProvider(allowed: string[] | null): Provider {
  return {
    get(path, key) {
      const properties = parseProperties(readText(checkAllowed(path, allowed)));
      const value = properties[key];
      if (typeof value !== 'string') throw new Error(`${path} has no key '${key}'`);
      return value;
    },
  };
}

function directoryProvider(allowed: string[] | null): Provider {
  return {
    get(path, key) {
      const dir = checkAllowed(path, allowed);
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (e) {
        throw new Error(
          `could not list ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
      }
      const file = join(dir, key);
      if (!names.includes(key) || !statSync(file).isFile())
        throw new Error(`${path} has no file '${key}'`);
      return readText(file);
    },
  };
}

function envProvider(pattern: string | undefined): Provider {
  // Kafka tests the pattern with Pattern.asPredicate(): a match anywhere in the name.
  const allow = pattern === undefined ? null : new RegExp(pattern);
  return {
    get(path, key) {
      if (path !== '') throw new Error(`EnvVarConfigProvider takes no path (write \${env:${key}})`);
      if (allow !== null && !allow.test(key))
        throw new Error(`${key} does not match allowlist.pattern ${pattern}`);
      const value = process.env[key];
      if (value === undefined) throw new Error(`the environment has no variable ${key}`);
      return value;
    },
  };
}
